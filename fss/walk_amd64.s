//go:build amd64 && !purego

#include "textflag.h"

// one is 1 in a 64-bit lane, broadcast to every lane.
DATA one<>+0(SB)/8, $1
GLOBL one<>(SB), RODATA|NOPTR, $8

// func expandAVX2(a *expandArgs)
//
// For i < a.n (a multiple of 4), with mk = a.mask[i]:
//
//	lo = a.out[i][0] ^ a.cwLo[i]&mk
//	a.seed[i] = {lo &^ 1, a.out[i][1] ^ a.cwHi[i]&mk}
//	a.childMask[i] = −(lo & 1)
//
// four keys at a time: their blocks' low and high words are gathered
// into two registers, in the lane order 0, 2, 1, 3 that VPUNPCK gives,
// which VPERMQ $0xd8 applies to (and undoes on) the word arrays.
TEXT ·expandAVX2(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), DX
	MOVQ         0(DX), SI   // out
	MOVQ         8(DX), R8   // cwLo
	MOVQ         16(DX), R9  // cwHi
	MOVQ         24(DX), R10 // mask
	MOVQ         32(DX), R11 // seed
	MOVQ         40(DX), R12 // childMask
	MOVQ         48(DX), CX  // n
	VPBROADCASTQ one<>(SB), Y15
	VPXOR        Y14, Y14, Y14

expand4:
	CMPQ        CX, $4
	JB          expanded
	VMOVDQU     0(SI), Y0       // lo0 hi0 | lo1 hi1
	VMOVDQU     32(SI), Y1      // lo2 hi2 | lo3 hi3
	VPUNPCKLQDQ Y1, Y0, Y2      // lo0 lo2 | lo1 lo3
	VPUNPCKHQDQ Y1, Y0, Y3      // hi0 hi2 | hi1 hi3
	VPERMQ      $0xd8, (R8), Y4 // cwLo in lane order 0 2 1 3
	VPERMQ      $0xd8, (R9), Y5 // cwHi
	VPERMQ      $0xd8, (R10), Y6 // mask
	VPAND       Y6, Y4, Y4
	VPAND       Y6, Y5, Y5
	VPXOR       Y4, Y2, Y2      // lo
	VPXOR       Y5, Y3, Y3      // high words of the seeds
	VPAND       Y15, Y2, Y7     // lo & 1
	VPSUBQ      Y7, Y14, Y7     // −(lo & 1)
	VPERMQ      $0xd8, Y7, Y7   // lane order 0 1 2 3
	VMOVDQU     Y7, (R12)
	VPANDN      Y2, Y15, Y2     // lo &^ 1
	VPUNPCKLQDQ Y3, Y2, Y0      // seed 0 | seed 1
	VPUNPCKHQDQ Y3, Y2, Y1      // seed 2 | seed 3
	VMOVDQU     Y0, 0(R11)
	VMOVDQU     Y1, 32(R11)
	ADDQ        $64, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	ADDQ        $32, R10
	ADDQ        $64, R11
	ADDQ        $32, R12
	SUBQ        $4, CX
	JMP         expand4

expanded:
	VZEROUPPER
	RET

// func maskedSumAVX2(add, mask *uint64, n int) uint64
//
// Σ_{i<n} add[i] & mask[i], n a multiple of 8.
TEXT ·maskedSumAVX2(SB), NOSPLIT, $0-32
	MOVQ  add+0(FP), SI
	MOVQ  mask+8(FP), DI
	MOVQ  n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

sum8:
	CMPQ    CX, $8
	JB      summed
	VMOVDQU 0(SI), Y2
	VMOVDQU 32(SI), Y3
	VPAND   0(DI), Y2, Y2
	VPAND   32(DI), Y3, Y3
	VPADDQ  Y2, Y0, Y0
	VPADDQ  Y3, Y1, Y1
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $8, CX
	JMP     sum8

summed:
	VPADDQ       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDQ       X1, X0, X0
	VMOVQ        X0, AX
	VZEROUPPER
	MOVQ         AX, ret+24(FP)
	RET
