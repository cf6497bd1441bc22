//go:build amd64 && !purego

#include "textflag.h"
#include "limbs_amd64.h"

// The probability scheme's kernels (tensor5_amd64.go); the field's
// constants and limb arithmetic are limbs_amd64.h's.

// WORDS5(at, before, z0, z1, z2): Z25 = the first differences
// P(j) − P(j − 1) mod p of the eight words W of a row at `at` (word g
// less word g − 5: the same component of the prefix before, the five
// words from the eight before W, in `before`), through Z24; then
// z0 + 2^52·z1 + 2^104·z2 += α_h·Z25 (α_h's limbs in Z28, Z29).
#define WORDS5(at, before, z0, z1, z2)       \
	VMOVDQU64    at, Z24                     \
	VALIGNQ      $3, before, Z24, Z25        \
	VPCMPUQ      $1, Z25, Z24, K1            \
	VPSUBQ       Z25, Z24, Z25               \
	VPADDQ.BCST  modulus<>(SB), Z25, K1, Z25 \
	LIMBS(Z25, Z26, Z27)                    \
	PRODUCT(Z28, Z29, Z26, Z27, z0, z1, z2)

// GATHER5(i1, i2, i3, i4, dst): dst = one component of the eight
// prefixes of a 5-component vector at SI (five rows of eight words) by
// four chained VPERMT2Q, their permutations in i1 … i4 (gather5 in
// tensor5_amd64.go): step s keeps the lanes found in the rows before
// row s and takes those in row s.
#define GATHER5(i1, i2, i3, i4, dst) \
	VMOVDQU64 0(SI), dst        \
	VPERMT2Q  64(SI), i1, dst   \
	VPERMT2Q  128(SI), i2, dst  \
	VPERMT2Q  192(SI), i3, dst  \
	VPERMT2Q  256(SI), i4, dst

// KEEP5_INDEX loads from AX the permutations of the summed components
// (keep5Index: count, label, probability) to Z19–Z30.
#define KEEP5_INDEX \
	VMOVDQU64 0(AX), Z19   \
	VMOVDQU64 64(AX), Z20  \
	VMOVDQU64 128(AX), Z21 \
	VMOVDQU64 192(AX), Z22 \
	VMOVDQU64 256(AX), Z23 \
	VMOVDQU64 320(AX), Z24 \
	VMOVDQU64 384(AX), Z25 \
	VMOVDQU64 448(AX), Z26 \
	VMOVDQU64 512(AX), Z27 \
	VMOVDQU64 576(AX), Z28 \
	VMOVDQU64 640(AX), Z29 \
	VMOVDQU64 704(AX), Z30

// KEEP5_ROW stores the count, label and probability of the row of eight
// prefixes at SI (KEEP5_INDEX) at R9, R10 and R11, and moves the four
// pointers on by a row.
#define KEEP5_ROW \
	GATHER5(Z19, Z20, Z21, Z22, Z0) \
	GATHER5(Z23, Z24, Z25, Z26, Z1) \
	GATHER5(Z27, Z28, Z29, Z30, Z2) \
	VMOVDQU64 Z0, (R9)              \
	VMOVDQU64 Z1, (R10)             \
	VMOVDQU64 Z2, (R11)             \
	ADDQ      $320, SI              \
	ADDQ      $64, R9               \
	ADDQ      $64, R10              \
	ADDQ      $64, R11

// func keep5AVX512(p *fss.Fp, rows int, index *[3][4][8]uint64, count, label, prob *fss.Fp)
//
// For rows ≥ 1 rows of eight prefixes of a 5-component prefix vector p,
// stores their counts at count, labels at label and probabilities at
// prob (KEEP5_ROW), the permutations that gather them at index
// (keep5Index).
TEXT ·keep5AVX512(SB), NOSPLIT, $0-48
	MOVQ  p+0(FP), SI
	MOVQ  rows+8(FP), CX
	MOVQ  index+16(FP), AX
	MOVQ  count+24(FP), R9
	MOVQ  label+32(FP), R10
	MOVQ  prob+40(FP), R11
	KEEP5_INDEX

keep5:
	KEEP5_ROW
	DECQ CX
	JNZ  keep5
	VZEROUPPER
	RET

// func tensor5IFMA(p *fss.Fp, prev *[8]uint64, alpha0, alpha20, alpha1, alpha21 *fss.Fp, rows int, acc0, acc1 *limbAcc, index *[3][4][8]uint64, count, label, prob *fss.Fp)
//
// For rows ≥ 1 rows of eight prefixes of a 5-component prefix vector p
// (lanes 3–7 of prev the components of the prefix before the first,
// zeros at the vector's start), adds to acc0 and acc1 the lane-wise sums
// of the two checks, under the row factors α (alpha0, alpha1) and α²
// (alpha20, alpha21): acc[3k + i][l] is part i (of weight 2^(52i)) of
// Σ_h α_h·ΔW(h, 8k + l), W(h, g) word g of row h and Δ the first
// difference of its component; acc[15 + i][l] part i of
// Σ_h α_h²·ΔC(h, l), C the count, gathered from the differences by the
// permutations at index (keep5Index's first). If count is not nil, it
// first stores the rows' counts, labels and probabilities at count,
// label and prob (KEEP5_ROW). The checks are taken one after the other,
// each over the whole rows: their 36 lane sums do not fit in the 32
// registers.
TEXT ·tensor5IFMA(SB), NOSPLIT, $0-104
	MOVQ  index+72(FP), AX
	MOVQ  count+80(FP), R9
	TESTQ R9, R9
	JZ    sums5
	MOVQ  p+0(FP), SI
	MOVQ  rows+48(FP), CX
	MOVQ  label+88(FP), R10
	MOVQ  prob+96(FP), R11
	KEEP5_INDEX

kept5:
	KEEP5_ROW
	DECQ CX
	JNZ  kept5

sums5:
	MOVQ         prev+8(FP), BX
	MOVQ         alpha0+16(FP), DI
	MOVQ         alpha20+24(FP), R8
	MOVQ         acc0+56(FP), DX
	MOVQ         $2, R9                   // checks to take
	VPBROADCASTQ mask52<>(SB), Z31
	VMOVDQU64    0(AX), Z19
	VMOVDQU64    64(AX), Z20
	VMOVDQU64    128(AX), Z21
	VMOVDQU64    192(AX), Z22

check5:
	MOVQ      p+0(FP), SI
	MOVQ      rows+48(FP), CX
	VMOVDQU64 0(BX), Z23
	VMOVDQU64 0(DX), Z0
	VMOVDQU64 64(DX), Z1
	VMOVDQU64 128(DX), Z2
	VMOVDQU64 192(DX), Z3
	VMOVDQU64 256(DX), Z4
	VMOVDQU64 320(DX), Z5
	VMOVDQU64 384(DX), Z6
	VMOVDQU64 448(DX), Z7
	VMOVDQU64 512(DX), Z8
	VMOVDQU64 576(DX), Z9
	VMOVDQU64 640(DX), Z10
	VMOVDQU64 704(DX), Z11
	VMOVDQU64 768(DX), Z12
	VMOVDQU64 832(DX), Z13
	VMOVDQU64 896(DX), Z14
	VMOVDQU64 960(DX), Z15
	VMOVDQU64 1024(DX), Z16
	VMOVDQU64 1088(DX), Z17

tensor5:
	VPBROADCASTQ (DI), Z28
	LIMBS(Z28, Z28, Z29)                         // α_h
	WORDS5(0(SI), Z23, Z0, Z1, Z2)                // Z23: the row before's last eight words
	VMOVDQA64    Z25, Z18
	WORDS5(64(SI), 0(SI), Z3, Z4, Z5)
	VPERMT2Q     Z25, Z19, Z18
	WORDS5(128(SI), 64(SI), Z6, Z7, Z8)
	VPERMT2Q     Z25, Z20, Z18
	WORDS5(192(SI), 128(SI), Z9, Z10, Z11)
	VPERMT2Q     Z25, Z21, Z18
	WORDS5(256(SI), 192(SI), Z12, Z13, Z14)
	VPERMT2Q     Z25, Z22, Z18                    // the count's differences
	VMOVDQA64    Z24, Z23
	VPBROADCASTQ (R8), Z24
	LIMBS(Z24, Z24, Z30)                         // α_h²
	LIMBS(Z18, Z18, Z26)
	PRODUCT(Z24, Z30, Z18, Z26, Z15, Z16, Z17)
	ADDQ         $320, SI
	ADDQ         $8, DI
	ADDQ         $8, R8
	DECQ         CX
	JNZ          tensor5

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
	VMOVDQU64 Z12, 768(DX)
	VMOVDQU64 Z13, 832(DX)
	VMOVDQU64 Z14, 896(DX)
	VMOVDQU64 Z15, 960(DX)
	VMOVDQU64 Z16, 1024(DX)
	VMOVDQU64 Z17, 1088(DX)
	MOVQ      alpha1+32(FP), DI
	MOVQ      alpha21+40(FP), R8
	MOVQ      acc1+64(FP), DX
	DECQ      R9
	JNZ       check5
	VZEROUPPER
	RET
