//go:build amd64 && !purego

#include "textflag.h"

// mask52 is 2^52 − 1, the low limb of a 64-bit word.
DATA mask52<>+0(SB)/8, $0x000fffffffffffff
GLOBL mask52<>(SB), RODATA|NOPTR, $8

// Permutations that gather, from three rows of eight prefixes (24 words
// P[3j + c]), component c of each: the first picks what lies in the
// first 16 words, the second completes from the last 8.
DATA idxC1<>+0(SB)/8, $0
DATA idxC1<>+8(SB)/8, $3
DATA idxC1<>+16(SB)/8, $6
DATA idxC1<>+24(SB)/8, $9
DATA idxC1<>+32(SB)/8, $12
DATA idxC1<>+40(SB)/8, $15
DATA idxC1<>+48(SB)/8, $0
DATA idxC1<>+56(SB)/8, $0
GLOBL idxC1<>(SB), RODATA|NOPTR, $64

DATA idxC2<>+0(SB)/8, $0
DATA idxC2<>+8(SB)/8, $1
DATA idxC2<>+16(SB)/8, $2
DATA idxC2<>+24(SB)/8, $3
DATA idxC2<>+32(SB)/8, $4
DATA idxC2<>+40(SB)/8, $5
DATA idxC2<>+48(SB)/8, $10
DATA idxC2<>+56(SB)/8, $13
GLOBL idxC2<>(SB), RODATA|NOPTR, $64

DATA idxL1<>+0(SB)/8, $1
DATA idxL1<>+8(SB)/8, $4
DATA idxL1<>+16(SB)/8, $7
DATA idxL1<>+24(SB)/8, $10
DATA idxL1<>+32(SB)/8, $13
DATA idxL1<>+40(SB)/8, $0
DATA idxL1<>+48(SB)/8, $0
DATA idxL1<>+56(SB)/8, $0
GLOBL idxL1<>(SB), RODATA|NOPTR, $64

DATA idxL2<>+0(SB)/8, $0
DATA idxL2<>+8(SB)/8, $1
DATA idxL2<>+16(SB)/8, $2
DATA idxL2<>+24(SB)/8, $3
DATA idxL2<>+32(SB)/8, $4
DATA idxL2<>+40(SB)/8, $8
DATA idxL2<>+48(SB)/8, $11
DATA idxL2<>+56(SB)/8, $14
GLOBL idxL2<>(SB), RODATA|NOPTR, $64

DATA idxM1<>+0(SB)/8, $2
DATA idxM1<>+8(SB)/8, $5
DATA idxM1<>+16(SB)/8, $8
DATA idxM1<>+24(SB)/8, $11
DATA idxM1<>+32(SB)/8, $14
DATA idxM1<>+40(SB)/8, $0
DATA idxM1<>+48(SB)/8, $0
DATA idxM1<>+56(SB)/8, $0
GLOBL idxM1<>(SB), RODATA|NOPTR, $64

DATA idxM2<>+0(SB)/8, $0
DATA idxM2<>+8(SB)/8, $1
DATA idxM2<>+16(SB)/8, $2
DATA idxM2<>+24(SB)/8, $3
DATA idxM2<>+32(SB)/8, $4
DATA idxM2<>+40(SB)/8, $9
DATA idxM2<>+48(SB)/8, $12
DATA idxM2<>+56(SB)/8, $15
GLOBL idxM2<>(SB), RODATA|NOPTR, $64

// func sketch3IFMA(p, u, w *fss.Fp, n int, acc *[12][8]uint64)
//
// For n prefixes (a multiple of 8, at most 1024) of a 3-component prefix
// vector p, sets acc to lane-wise sums whose total is the four sketch
// sums Σ_j u_j·C_j, Σ_j u_j·L_j, Σ_j u_j·M_j and Σ_j w_j·C_j (C, L, M
// the components): sum d has its 2^0, 2^52 and 2^104 parts in acc[3d],
// acc[3d+1], acc[3d+2]. Each 64-bit factor splits into 52-bit and 12-bit
// limbs x = x0 + 2^52·x1, and x·y = x0y0 + 2^52(x0y1 + x1y0) + 2^104·x1y1
// with VPMADD52LUQ/HUQ adding the low and high 52 bits of each limb
// product (x1y1 < 2^24 has no high part). Per lane and block of 128
// iterations a part gains less than 3·128·2^52, so the eight lanes sum
// in 64 bits.
TEXT ·sketch3IFMA(SB), NOSPLIT, $0-40
	MOVQ         p+0(FP), SI
	MOVQ         u+8(FP), DI
	MOVQ         w+16(FP), R8
	MOVQ         n+24(FP), CX
	MOVQ         acc+32(FP), DX
	VPBROADCASTQ mask52<>(SB), Z31
	VMOVDQU64    idxC1<>(SB), Z24
	VMOVDQU64    idxC2<>(SB), Z25
	VMOVDQU64    idxL1<>(SB), Z26
	VMOVDQU64    idxL2<>(SB), Z27
	VMOVDQU64    idxM1<>(SB), Z28
	VMOVDQU64    idxM2<>(SB), Z29
	VPXORQ       Z0, Z0, Z0
	VPXORQ       Z1, Z1, Z1
	VPXORQ       Z2, Z2, Z2
	VPXORQ       Z3, Z3, Z3
	VPXORQ       Z4, Z4, Z4
	VPXORQ       Z5, Z5, Z5
	VPXORQ       Z6, Z6, Z6
	VPXORQ       Z7, Z7, Z7
	VPXORQ       Z8, Z8, Z8
	VPXORQ       Z9, Z9, Z9
	VPXORQ       Z10, Z10, Z10
	VPXORQ       Z11, Z11, Z11

	TESTQ        CX, CX
	JZ           done

loop:
	VMOVDQU64 0(SI), Z12
	VMOVDQU64 64(SI), Z13
	VMOVDQU64 128(SI), Z14
	VMOVDQU64 (DI), Z18
	VPANDQ    Z31, Z18, Z19
	VPSRLQ    $52, Z18, Z20
	VMOVDQU64 (R8), Z21
	VPANDQ    Z31, Z21, Z22
	VPSRLQ    $52, Z21, Z23

	// count: u·C and w·C
	VMOVDQA64  Z12, Z15
	VPERMT2Q   Z13, Z24, Z15
	VPERMT2Q   Z14, Z25, Z15
	VPANDQ     Z31, Z15, Z16
	VPSRLQ     $52, Z15, Z17
	VPMADD52LUQ Z16, Z19, Z0
	VPMADD52HUQ Z16, Z19, Z1
	VPMADD52LUQ Z17, Z19, Z1
	VPMADD52HUQ Z17, Z19, Z2
	VPMADD52LUQ Z16, Z20, Z1
	VPMADD52HUQ Z16, Z20, Z2
	VPMADD52LUQ Z17, Z20, Z2
	VPMADD52LUQ Z16, Z22, Z9
	VPMADD52HUQ Z16, Z22, Z10
	VPMADD52LUQ Z17, Z22, Z10
	VPMADD52HUQ Z17, Z22, Z11
	VPMADD52LUQ Z16, Z23, Z10
	VPMADD52HUQ Z16, Z23, Z11
	VPMADD52LUQ Z17, Z23, Z11

	// label: u·L
	VMOVDQA64  Z12, Z15
	VPERMT2Q   Z13, Z26, Z15
	VPERMT2Q   Z14, Z27, Z15
	VPANDQ     Z31, Z15, Z16
	VPSRLQ     $52, Z15, Z17
	VPMADD52LUQ Z16, Z19, Z3
	VPMADD52HUQ Z16, Z19, Z4
	VPMADD52LUQ Z17, Z19, Z4
	VPMADD52HUQ Z17, Z19, Z5
	VPMADD52LUQ Z16, Z20, Z4
	VPMADD52HUQ Z16, Z20, Z5
	VPMADD52LUQ Z17, Z20, Z5

	// MAC: u·M
	VMOVDQA64  Z12, Z15
	VPERMT2Q   Z13, Z28, Z15
	VPERMT2Q   Z14, Z29, Z15
	VPANDQ     Z31, Z15, Z16
	VPSRLQ     $52, Z15, Z17
	VPMADD52LUQ Z16, Z19, Z6
	VPMADD52HUQ Z16, Z19, Z7
	VPMADD52LUQ Z17, Z19, Z7
	VPMADD52HUQ Z17, Z19, Z8
	VPMADD52LUQ Z16, Z20, Z7
	VPMADD52HUQ Z16, Z20, Z8
	VPMADD52LUQ Z17, Z20, Z8

	ADDQ $192, SI
	ADDQ $64, DI
	ADDQ $64, R8
	SUBQ $8, CX
	JNZ  loop

done:
	VMOVDQU64 Z0, 0(DX)
	VMOVDQU64 Z1, 64(DX)
	VMOVDQU64 Z2, 128(DX)
	VMOVDQU64 Z3, 192(DX)
	VMOVDQU64 Z4, 256(DX)
	VMOVDQU64 Z5, 320(DX)
	VMOVDQU64 Z6, 384(DX)
	VMOVDQU64 Z7, 448(DX)
	VMOVDQU64 Z8, 512(DX)
	VMOVDQU64 Z9, 576(DX)
	VMOVDQU64 Z10, 640(DX)
	VMOVDQU64 Z11, 704(DX)
	VZEROUPPER
	RET

// twoTo32m1 is 2^32 − 1 ≡ 2^64 (mod p).
DATA twoTo32m1<>+0(SB)/8, $0xffffffff
GLOBL twoTo32m1<>(SB), RODATA|NOPTR, $8

// func fold3AVX512(p *fss.Fp, count, label *uint64, n int)
//
// For n prefixes (a multiple of 8) of a 3-component prefix vector p, adds
// component 0 (count) to count[j] and component 1 (label) to label[j] as
// words congruent mod p: a sum that carries gets the lost 2^64 ≡ 2^32 − 1
// back (fss.AddLazy), eight prefixes per instruction.
TEXT ·fold3AVX512(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), SI
	MOVQ         count+8(FP), DI
	MOVQ         label+16(FP), R8
	MOVQ         n+24(FP), CX
	VPBROADCASTQ twoTo32m1<>(SB), Z30
	VMOVDQU64    idxC1<>(SB), Z24
	VMOVDQU64    idxC2<>(SB), Z25
	VMOVDQU64    idxL1<>(SB), Z26
	VMOVDQU64    idxL2<>(SB), Z27
	TESTQ        CX, CX
	JZ           folded

fold:
	VMOVDQU64  0(SI), Z12
	VMOVDQU64  64(SI), Z13
	VMOVDQU64  128(SI), Z14
	VMOVDQA64  Z12, Z15
	VPERMT2Q   Z13, Z24, Z15
	VPERMT2Q   Z14, Z25, Z15 // count
	VMOVDQU64  (DI), Z16
	VPADDQ     Z15, Z16, Z16
	VPCMPUQ    $1, Z15, Z16, K1 // carried: the sum is below the term
	VPADDQ     Z30, Z16, K1, Z16
	VMOVDQU64  Z16, (DI)
	VMOVDQA64  Z12, Z17
	VPERMT2Q   Z13, Z26, Z17
	VPERMT2Q   Z14, Z27, Z17 // label
	VMOVDQU64  (R8), Z18
	VPADDQ     Z17, Z18, Z18
	VPCMPUQ    $1, Z17, Z18, K2
	VPADDQ     Z30, Z18, K2, Z18
	VMOVDQU64  Z18, (R8)
	ADDQ       $192, SI
	ADDQ       $64, DI
	ADDQ       $64, R8
	SUBQ       $8, CX
	JNZ        fold

folded:
	VZEROUPPER
	RET
