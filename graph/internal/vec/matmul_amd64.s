//go:build goexperiment.simd

#include "textflag.h"

// The kernels leave Z15 alone: Go's internal ABI keeps zero in X15.

// func rowsKernel(k int, a *[6]*float64, acs int, b *float64, ldb, n int, c *[6]*float64)
//
// c[r][j] = sum over p < k (k >= 1) of a[r][p*acs] * b[p*ldb+j] for the 6
// rows r and j < n, 16 columns at a time in 12 registers, the last block's
// columns under masks (the second 8 skipped, with half the multiply-adds,
// when it has 8 or fewer). acs and ldb count elements.
TEXT ·rowsKernel(SB), NOSPLIT, $8-56
	MOVQ a+8(FP), BX
	MOVQ 0(BX), SI
	MOVQ 8(BX), R8
	MOVQ 16(BX), R9
	MOVQ 24(BX), R10
	MOVQ 32(BX), R11
	MOVQ 40(BX), R12
	MOVQ acs+16(FP), AX
	SHLQ $3, AX
	MOVQ ldb+32(FP), DX
	SHLQ $3, DX
	MOVQ $0, j-8(SP)

block:
	// Masks of the block's width min(16, n-j): K1 the first 8 columns,
	// K2 the next 8.
	MOVQ n+40(FP), CX
	SUBQ j-8(SP), CX
	CMPQ CX, $16
	JLE width
	MOVQ $16, CX

width:
	MOVL $1, R13
	SHLQ CX, R13
	DECQ R13
	KMOVW R13, K1
	KSHIFTRW $8, K1, K2
	MOVQ j-8(SP), R13
	MOVQ b+24(FP), DI
	LEAQ (DI)(R13*8), DI
	XORQ R13, R13
	MOVQ k+0(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	KORTESTB K2, K2
	JEQ loop8

loop:
	VMOVUPD.Z (DI), K1, Z12
	VMOVUPD.Z 64(DI), K2, Z13
	VBROADCASTSD (SI)(R13*1), Z14
	VBROADCASTSD (R8)(R13*1), Z20
	VBROADCASTSD (R9)(R13*1), Z16
	VBROADCASTSD (R10)(R13*1), Z17
	VBROADCASTSD (R11)(R13*1), Z18
	VBROADCASTSD (R12)(R13*1), Z19
	VFMADD231PD Z12, Z14, Z0
	VFMADD231PD Z13, Z14, Z1
	VFMADD231PD Z12, Z20, Z2
	VFMADD231PD Z13, Z20, Z3
	VFMADD231PD Z12, Z16, Z4
	VFMADD231PD Z13, Z16, Z5
	VFMADD231PD Z12, Z17, Z6
	VFMADD231PD Z13, Z17, Z7
	VFMADD231PD Z12, Z18, Z8
	VFMADD231PD Z13, Z18, Z9
	VFMADD231PD Z12, Z19, Z10
	VFMADD231PD Z13, Z19, Z11
	ADDQ AX, R13
	ADDQ DX, DI
	DECQ CX
	JNE loop

store:
	MOVQ c+48(FP), BX
	MOVQ j-8(SP), R13
	MOVQ 0(BX), CX
	VMOVUPD Z0, K1, (CX)(R13*8)
	VMOVUPD Z1, K2, 64(CX)(R13*8)
	MOVQ 8(BX), CX
	VMOVUPD Z2, K1, (CX)(R13*8)
	VMOVUPD Z3, K2, 64(CX)(R13*8)
	MOVQ 16(BX), CX
	VMOVUPD Z4, K1, (CX)(R13*8)
	VMOVUPD Z5, K2, 64(CX)(R13*8)
	MOVQ 24(BX), CX
	VMOVUPD Z6, K1, (CX)(R13*8)
	VMOVUPD Z7, K2, 64(CX)(R13*8)
	MOVQ 32(BX), CX
	VMOVUPD Z8, K1, (CX)(R13*8)
	VMOVUPD Z9, K2, 64(CX)(R13*8)
	MOVQ 40(BX), CX
	VMOVUPD Z10, K1, (CX)(R13*8)
	VMOVUPD Z11, K2, 64(CX)(R13*8)
	ADDQ $16, R13
	MOVQ R13, j-8(SP)
	CMPQ R13, n+40(FP)
	JLT block
	VZEROUPPER
	RET

loop8:
	VMOVUPD.Z (DI), K1, Z12
	VBROADCASTSD (SI)(R13*1), Z14
	VBROADCASTSD (R8)(R13*1), Z20
	VBROADCASTSD (R9)(R13*1), Z16
	VBROADCASTSD (R10)(R13*1), Z17
	VBROADCASTSD (R11)(R13*1), Z18
	VBROADCASTSD (R12)(R13*1), Z19
	VFMADD231PD Z12, Z14, Z0
	VFMADD231PD Z12, Z20, Z2
	VFMADD231PD Z12, Z16, Z4
	VFMADD231PD Z12, Z17, Z6
	VFMADD231PD Z12, Z18, Z8
	VFMADD231PD Z12, Z19, Z10
	ADDQ AX, R13
	ADDQ DX, DI
	DECQ CX
	JNE loop8
	JMP store

// func dotsKernel(m, k int, a *float64, lda int, b *[8]*float64, mask uint8, c *float64, ldc int)
//
// c[i*ldc+q] = sum over p < k of a[i*lda+p] * b[q][p] for i < m (m >= 1)
// and the 8 rows q of b, stored where bit q of mask is set. Per row of a:
// the 8 dot products in 8 registers along p (a masked vector at the end),
// then their lanes summed in one transposing tree (unpack, then 256- and
// 128-bit lane shuffles) into one vector of the 8 sums.
TEXT ·dotsKernel(SB), NOSPLIT, $0-64
	MOVQ b+32(FP), AX
	MOVQ 0(AX), BX
	MOVQ 8(AX), SI
	MOVQ 16(AX), DI
	MOVQ 24(AX), R8
	MOVQ 32(AX), R9
	MOVQ 40(AX), R10
	MOVQ 48(AX), R11
	MOVQ 56(AX), R12
	MOVBQZX mask+40(FP), AX
	KMOVB AX, K1
	MOVQ k+8(FP), CX
	ANDQ $7, CX
	MOVL $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVB AX, K2
	MOVQ a+16(FP), AX
	MOVQ c+48(FP), DX

row:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	XORQ R13, R13
	MOVQ k+8(FP), CX

full:
	CMPQ CX, $8
	JLT tail
	VMOVUPD (AX)(R13*1), Z8
	VFMADD231PD (BX)(R13*1), Z8, Z0
	VFMADD231PD (SI)(R13*1), Z8, Z1
	VFMADD231PD (DI)(R13*1), Z8, Z2
	VFMADD231PD (R8)(R13*1), Z8, Z3
	VFMADD231PD (R9)(R13*1), Z8, Z4
	VFMADD231PD (R10)(R13*1), Z8, Z5
	VFMADD231PD (R11)(R13*1), Z8, Z6
	VFMADD231PD (R12)(R13*1), Z8, Z7
	ADDQ $64, R13
	SUBQ $8, CX
	JMP full

tail:
	TESTQ CX, CX
	JEQ reduce
	VMOVUPD.Z (AX)(R13*1), K2, Z8
	VMOVUPD.Z (BX)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z0
	VMOVUPD.Z (SI)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z1
	VMOVUPD.Z (DI)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z2
	VMOVUPD.Z (R8)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z3
	VMOVUPD.Z (R9)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z4
	VMOVUPD.Z (R10)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z5
	VMOVUPD.Z (R11)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z6
	VMOVUPD.Z (R12)(R13*1), K2, Z9
	VFMADD231PD Z9, Z8, Z7

reduce:
	// Pairs: Z10 = [s0 s1] partial sums per 128-bit lane, and so on.
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VADDPD Z9, Z8, Z10
	VUNPCKLPD Z3, Z2, Z8
	VUNPCKHPD Z3, Z2, Z9
	VADDPD Z9, Z8, Z11
	VUNPCKLPD Z5, Z4, Z8
	VUNPCKHPD Z5, Z4, Z9
	VADDPD Z9, Z8, Z12
	VUNPCKLPD Z7, Z6, Z8
	VUNPCKHPD Z7, Z6, Z9
	VADDPD Z9, Z8, Z13
	// Lanes 0+1 and 2+3 of each pair of vectors, twice.
	VSHUFF64X2 $0x88, Z11, Z10, Z8
	VSHUFF64X2 $0xDD, Z11, Z10, Z9
	VADDPD Z9, Z8, Z10
	VSHUFF64X2 $0x88, Z13, Z12, Z8
	VSHUFF64X2 $0xDD, Z13, Z12, Z9
	VADDPD Z9, Z8, Z12
	VSHUFF64X2 $0x88, Z12, Z10, Z8
	VSHUFF64X2 $0xDD, Z12, Z10, Z9
	VADDPD Z9, Z8, Z8
	VMOVUPD Z8, K1, (DX)

	MOVQ lda+24(FP), CX
	LEAQ (AX)(CX*8), AX
	MOVQ ldc+56(FP), CX
	LEAQ (DX)(CX*8), DX
	DECQ m+0(FP)
	JNE row
	VZEROUPPER
	RET
