#include "textflag.h"

// The SSE set's window kernels, column sums, ReLU and mask (sse_amd64.go):
// SSE2 only, 4 channels at a time, with the plain loops' operations in
// their order (firstMax, maxAffineRowGo, backPoolMaxRowGo,
// gatherDotMaxRowGo, momentsGo, dotCenteredGo, reluGo, maskGo), so their
// values bit for bit, NaN and signed zeros included.

DATA sseNaN<>+0(SB)/4, $0x7fc00000
DATA sseNaN<>+4(SB)/4, $0x7fc00000
DATA sseNaN<>+8(SB)/4, $0x7fc00000
DATA sseNaN<>+12(SB)/4, $0x7fc00000
GLOBL sseNaN<>(SB), RODATA|NOPTR, $16

// FIRSTMAX takes the window's entries in X0-X3 and the scale in X4 and
// leaves firstMax's position as four masks: X5 (0), X9 (1), X6 (2), X8
// (3). The maximum of the products is NaN where one is (Go's max), so that
// no entry equals it and position 3 wins. Clobbers X7 and X10-X12.
#define FIRSTMAX \
	MOVUPS X0, X5; MULPS X4, X5; \
	MOVUPS X1, X6; MULPS X4, X6; \
	MOVUPS X2, X7; MULPS X4, X7; \
	MOVUPS X3, X8; MULPS X4, X8; \
	MOVUPS X5, X9; MAXPS X6, X9; \
	MOVUPS X7, X10; MAXPS X8, X10; \
	MAXPS X10, X9; \
	MOVUPS X5, X10; CMPPS X6, X10, $3; \
	MOVUPS X7, X11; CMPPS X8, X11, $3; \
	ORPS X11, X10; \
	MOVUPS sseNaN<>(SB), X11; ANDPS X10, X11; \
	ANDNPS X9, X10; ORPS X11, X10; \
	CMPPS X10, X5, $0; \
	CMPPS X10, X6, $0; \
	CMPPS X10, X7, $0; \
	MOVUPS X5, X9; ANDNPS X6, X9; \
	MOVUPS X5, X11; ORPS X6, X11; \
	MOVUPS X11, X6; ANDNPS X7, X6; \
	ORPS X7, X11; \
	PCMPEQL X12, X12; \
	MOVUPS X11, X8; XORPS X12, X8

// SELECT leaves in X5 the entry of X0-X3 at FIRSTMAX's position.
#define SELECT \
	ANDPS X0, X5; \
	ANDPS X1, X9; ORPS X9, X5; \
	ANDPS X2, X6; ORPS X6, X5; \
	ANDPS X3, X8; ORPS X8, X5

// func maxAffineRowSSEKernel(dst, z0, z1, a, c *float32, n, f int)
TEXT ·maxAffineRowSSEKernel(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DX
	MOVQ z0+8(FP), SI
	MOVQ z1+16(FP), DI
	MOVQ n+40(FP), CX
	MOVQ f+48(FP), R9
	SHLQ $2, R9 // a row of f channels, in bytes

mrow:
	MOVQ a+24(FP), AX
	MOVQ c+32(FP), BX
	LEAQ (SI)(R9*1), R11 // the windows' right pixels
	LEAQ (DI)(R9*1), R12
	XORQ R8, R8

mch:
	MOVUPS (SI)(R8*1), X0
	MOVUPS (R11)(R8*1), X1
	MOVUPS (DI)(R8*1), X2
	MOVUPS (R12)(R8*1), X3
	MOVUPS (AX)(R8*1), X4
	FIRSTMAX
	SELECT
	MULPS X4, X5
	MOVUPS (BX)(R8*1), X6
	ADDPS X6, X5
	MOVUPS X5, (DX)(R8*1)
	ADDQ $16, R8
	CMPQ R8, R9
	JLT  mch
	ADDQ R9, DX
	LEAQ (SI)(R9*2), SI
	LEAQ (DI)(R9*2), DI
	DECQ CX
	JNE  mrow
	RET

// func backPoolMaxRowSSEKernel(o0, o1, z0, z1, grad, u, v, w *float32, n, c int)
TEXT ·backPoolMaxRowSSEKernel(SB), NOSPLIT, $0-80
	MOVQ o0+0(FP), R13
	MOVQ o1+8(FP), R14
	MOVQ z0+16(FP), SI
	MOVQ z1+24(FP), DI
	MOVQ grad+32(FP), DX
	MOVQ n+64(FP), CX
	MOVQ c+72(FP), R9
	SHLQ $2, R9

brow:
	LEAQ (SI)(R9*1), R11
	LEAQ (DI)(R9*1), R12
	LEAQ (R13)(R9*1), BX // the windows' right outputs
	LEAQ (R14)(R9*1), R10
	XORQ R8, R8

bch:
	MOVUPS (SI)(R8*1), X0
	MOVUPS (R11)(R8*1), X1
	MOVUPS (DI)(R8*1), X2
	MOVUPS (R12)(R8*1), X3
	MOVQ u+40(FP), AX
	MOVUPS (AX)(R8*1), X4
	FIRSTMAX
	MOVUPS (DX)(R8*1), X7
	MULPS X4, X7 // g*u
	MOVQ v+48(FP), AX
	MOVUPS (AX)(R8*1), X10
	MOVQ w+56(FP), AX
	MOVUPS (AX)(R8*1), X11
	// Each entry: y = x*v + w, and y + g*u where the window's maximum is.
	MULPS X10, X0; ADDPS X11, X0
	MOVUPS X0, X12; ADDPS X7, X12; ANDPS X5, X12; ANDNPS X0, X5; ORPS X12, X5
	MOVUPS X5, (R13)(R8*1)
	MULPS X10, X1; ADDPS X11, X1
	MOVUPS X1, X12; ADDPS X7, X12; ANDPS X9, X12; ANDNPS X1, X9; ORPS X12, X9
	MOVUPS X9, (BX)(R8*1)
	MULPS X10, X2; ADDPS X11, X2
	MOVUPS X2, X12; ADDPS X7, X12; ANDPS X6, X12; ANDNPS X2, X6; ORPS X12, X6
	MOVUPS X6, (R14)(R8*1)
	MULPS X10, X3; ADDPS X11, X3
	MOVUPS X3, X12; ADDPS X7, X12; ANDPS X8, X12; ANDNPS X3, X8; ORPS X12, X8
	MOVUPS X8, (R10)(R8*1)
	ADDQ $16, R8
	CMPQ R8, R9
	JLT  bch
	ADDQ R9, DX
	LEAQ (SI)(R9*2), SI
	LEAQ (DI)(R9*2), DI
	LEAQ (R13)(R9*2), R13
	LEAQ (R14)(R9*2), R14
	DECQ CX
	JNE  brow
	RET

// func gatherDotMaxRowSSEKernel(acc *float64, z0, z1, grad, s, mu *float32, n, f int)
TEXT ·gatherDotMaxRowSSEKernel(SB), NOSPLIT, $0-64
	MOVQ z0+8(FP), SI
	MOVQ z1+16(FP), DI
	MOVQ grad+24(FP), DX
	MOVQ n+48(FP), CX
	MOVQ f+56(FP), R9
	SHLQ $2, R9

grow:
	MOVQ acc+0(FP), R13
	MOVQ s+32(FP), AX
	MOVQ mu+40(FP), BX
	LEAQ (SI)(R9*1), R11
	LEAQ (DI)(R9*1), R12
	XORQ R8, R8

gch:
	MOVUPS (SI)(R8*1), X0
	MOVUPS (R11)(R8*1), X1
	MOVUPS (DI)(R8*1), X2
	MOVUPS (R12)(R8*1), X3
	MOVUPS (AX)(R8*1), X4
	FIRSTMAX
	SELECT
	MOVUPS (BX)(R8*1), X6
	SUBPS X6, X5 // x - mu
	MOVUPS (DX)(R8*1), X6
	MULPS X6, X5 // g * (x - mu), in float32
	CVTPS2PD X5, X6
	MOVUPD (R13), X7
	ADDPD X6, X7
	MOVUPD X7, (R13)
	MOVHLPS X5, X5
	CVTPS2PD X5, X6
	MOVUPD 16(R13), X7
	ADDPD X6, X7
	MOVUPD X7, 16(R13)
	ADDQ $32, R13
	ADDQ $16, R8
	CMPQ R8, R9
	JLT  gch
	ADDQ R9, DX
	LEAQ (SI)(R9*2), SI
	LEAQ (DI)(R9*2), DI
	DECQ CX
	JNE  grow
	RET

// func momentsColumnSSE(sum, sq *float64, x, shift *float32, stride, rows int)
//
// Adds d and d*d, d = float64(x - shift), to sum[0:4] and sq[0:4] for
// rows rows of 4 channels stride float32s apart.
TEXT ·momentsColumnSSE(SB), NOSPLIT, $0-48
	MOVQ sum+0(FP), AX
	MOVQ sq+8(FP), BX
	MOVQ x+16(FP), SI
	MOVQ shift+24(FP), DX
	MOVQ stride+32(FP), R8
	SHLQ $2, R8 // a row, in bytes
	MOVQ rows+40(FP), CX
	MOVUPS (DX), X0
	MOVUPD (AX), X1
	MOVUPD 16(AX), X2
	MOVUPD (BX), X3
	MOVUPD 16(BX), X4
	TESTQ CX, CX
	JEQ  mdone

mloop:
	MOVUPS (SI), X5
	SUBPS  X0, X5 // x - shift, in float32
	CVTPS2PD X5, X6 // channels 0-1 in float64
	MOVHLPS X5, X7
	CVTPS2PD X7, X7 // channels 2-3
	ADDPD  X6, X1
	ADDPD  X7, X2
	MULPD  X6, X6
	MULPD  X7, X7
	ADDPD  X6, X3
	ADDPD  X7, X4
	ADDQ   R8, SI
	DECQ   CX
	JNE    mloop

mdone:
	MOVUPD X1, (AX)
	MOVUPD X2, 16(AX)
	MOVUPD X3, (BX)
	MOVUPD X4, 16(BX)
	RET

// func dotColumnSSE(acc *float64, grad, z, mu *float32, stride, rows int)
//
// Adds float64(grad * (z - mu)) to acc[0:4] for rows rows of 4 channels
// stride float32s apart.
TEXT ·dotColumnSSE(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), AX
	MOVQ grad+8(FP), BX
	MOVQ z+16(FP), SI
	MOVQ mu+24(FP), DX
	MOVQ stride+32(FP), R8
	SHLQ $2, R8
	MOVQ rows+40(FP), CX
	MOVUPS (DX), X0
	MOVUPD (AX), X1
	MOVUPD 16(AX), X2
	TESTQ CX, CX
	JEQ  ddone

dloop:
	MOVUPS (SI), X5
	SUBPS  X0, X5 // z - mu
	MOVUPS (BX), X6
	MULPS  X5, X6 // grad * (z - mu), in float32
	CVTPS2PD X6, X7
	MOVHLPS X6, X6
	CVTPS2PD X6, X6
	ADDPD  X7, X1
	ADDPD  X6, X2
	ADDQ   R8, SI
	ADDQ   R8, BX
	DECQ   CX
	JNE    dloop

ddone:
	MOVUPD X1, (AX)
	MOVUPD X2, 16(AX)
	RET

// func reluSSEKernel(dst, x *float32, n int)
//
// dst = max(x, 0) for n > 0 values, n a multiple of 4. MAXPS returns its
// source operand (x) if either is NaN or both are zeros: x's NaN is kept,
// and adding +0 makes max(-0, 0) +0, as Go's max.
TEXT ·reluSSEKernel(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORPS X1, X1

rloop:
	MOVUPS (SI), X0
	MOVAPS X1, X2
	MAXPS  X0, X2
	ADDPS  X1, X2
	MOVUPS X2, (DI)
	ADDQ   $16, SI
	ADDQ   $16, DI
	SUBQ   $4, CX
	JNE    rloop
	RET

// func maskSSEKernel(dst, x, v *float32, n int)
//
// dst = v where x > 0 (not NaN), else +0, for n > 0 values, n a multiple
// of 4.
TEXT ·maskSSEKernel(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ n+24(FP), CX
	XORPS X3, X3

kloop:
	MOVUPS (SI), X0
	MOVAPS X3, X1
	CMPPS  X0, X1, $1 // 0 < x
	MOVUPS (DX), X2
	ANDPS  X1, X2
	MOVUPS X2, (DI)
	ADDQ   $16, SI
	ADDQ   $16, DX
	ADDQ   $16, DI
	SUBQ   $4, CX
	JNE    kloop
	RET
