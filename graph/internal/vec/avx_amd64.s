//go:build goexperiment.simd

#include "textflag.h"

// The AVX set's column sums (avx_amd64.go), in assembly because they keep
// 8-lane and float64x4 values in registers: Go code may be preempted
// anywhere, and without AVX2 the runtime saves only the registers' lower
// 128 bits; an assembly function is never preempted. AVX instructions
// only (no FMA), each in the plain loop's order (momentsGo, dotCenteredGo),
// so the sums are the plain loops' bit for bit.

// func momentsColumnAVX(sum, sq *float64, x, shift *float32, stride, rows int)
//
// Adds d and d*d, d = float64(x - shift), to sum[0:8] and sq[0:8] for
// rows rows of 8 channels stride float32s apart.
TEXT ·momentsColumnAVX(SB), NOSPLIT, $0-48
	MOVQ sum+0(FP), AX
	MOVQ sq+8(FP), BX
	MOVQ x+16(FP), SI
	MOVQ shift+24(FP), DX
	MOVQ stride+32(FP), R8
	SHLQ $2, R8 // a row, in bytes
	MOVQ rows+40(FP), CX
	VMOVUPS (DX), Y0
	VMOVUPD (AX), Y1
	VMOVUPD 32(AX), Y2
	VMOVUPD (BX), Y3
	VMOVUPD 32(BX), Y4
	TESTQ CX, CX
	JEQ  mdone

mloop:
	VMOVUPS (SI), Y5
	VSUBPS  Y0, Y5, Y5 // x - shift, in float32
	VCVTPS2PD X5, Y6
	VEXTRACTF128 $1, Y5, X7
	VCVTPS2PD X7, Y7
	VADDPD  Y6, Y1, Y1
	VADDPD  Y7, Y2, Y2
	VMULPD  Y6, Y6, Y6
	VMULPD  Y7, Y7, Y7
	VADDPD  Y6, Y3, Y3
	VADDPD  Y7, Y4, Y4
	ADDQ    R8, SI
	DECQ    CX
	JNE     mloop

mdone:
	VMOVUPD Y1, (AX)
	VMOVUPD Y2, 32(AX)
	VMOVUPD Y3, (BX)
	VMOVUPD Y4, 32(BX)
	VZEROUPPER
	RET

// func dotColumnAVX(acc *float64, grad, z, mu *float32, stride, rows int)
//
// Adds float64(grad * (z - mu)) to acc[0:8] for rows rows of 8 channels
// stride float32s apart.
TEXT ·dotColumnAVX(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), AX
	MOVQ grad+8(FP), BX
	MOVQ z+16(FP), SI
	MOVQ mu+24(FP), DX
	MOVQ stride+32(FP), R8
	SHLQ $2, R8
	MOVQ rows+40(FP), CX
	VMOVUPS (DX), Y0
	VMOVUPD (AX), Y1
	VMOVUPD 32(AX), Y2
	TESTQ CX, CX
	JEQ  ddone

dloop:
	VMOVUPS (SI), Y5
	VSUBPS  Y0, Y5, Y5 // z - mu
	VMOVUPS (BX), Y6
	VMULPS  Y5, Y6, Y5 // grad * (z - mu), in float32
	VCVTPS2PD X5, Y6
	VEXTRACTF128 $1, Y5, X7
	VCVTPS2PD X7, Y7
	VADDPD  Y6, Y1, Y1
	VADDPD  Y7, Y2, Y2
	ADDQ    R8, SI
	ADDQ    R8, BX
	DECQ    CX
	JNE     dloop

ddone:
	VMOVUPD Y1, (AX)
	VMOVUPD Y2, 32(AX)
	VZEROUPPER
	RET
