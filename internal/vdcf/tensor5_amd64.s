//go:build amd64 && !purego

#include "textflag.h"
#include "limbs_amd64.h"

// The probability scheme's kernels (tensor5_amd64.go); the field's
// constants and limb arithmetic are limbs_amd64.h's.

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

// COMP5(i1, i2, i3, i4, prev, lo, hi, keep): gathers one component of
// the row at SI to Z5 (GATHER5), then `keep`, and stores the limbs of
// its first differences (DIFF, the row before's in prev) at lo(DI)
// and hi(DI).
#define COMP5(i1, i2, i3, i4, prev, lo, hi, keep) \
	GATHER5(i1, i2, i3, i4, Z5) \
	keep                        \
	DIFF(Z5, prev, Z6)          \
	LIMBS(Z6, Z6, Z7)           \
	VMOVDQU64 Z6, lo(DI)        \
	VMOVDQU64 Z7, hi(DI)

// DIFFS5(keepCount, keepLabel, keepProb) transposes the row of eight
// prefixes at SI into its five components (permutations in Z8–Z27,
// gather5) and stores the limbs of their first differences at DI,
// component c's at 128c and 128c + 64 (a row of 640 bytes), the
// summed components each followed by its `keep`; the components of the
// prefix before are in the last lanes of Z0–Z4.
#define DIFFS5(keepCount, keepLabel, keepProb) \
	COMP5(Z8, Z9, Z10, Z11, Z0, 0, 64, keepCount)      \
	COMP5(Z12, Z13, Z14, Z15, Z1, 128, 192, keepLabel) \
	COMP5(Z16, Z17, Z18, Z19, Z2, 256, 320, NOKEEP)    \
	COMP5(Z20, Z21, Z22, Z23, Z3, 384, 448, keepProb)  \
	COMP5(Z24, Z25, Z26, Z27, Z4, 512, 576, NOKEEP)    \
	ADDQ $320, SI                                       \
	ADDQ $640, DI

// SUMS5 adds one row's sums of one check from the differences' limbs
// at BX (DIFFS5) and the check's MAC's at R12, under α_h at DI and α_h²
// at R8: the count's, label's, MAC's, the count's under α_h², and the
// probability's, to Z0–Z14 (three parts each, limbAcc).
#define SUMS5 \
	VPBROADCASTQ (DI), Z15                   \
	LIMBS(Z15, Z15, Z16)                     \
	VPBROADCASTQ (R8), Z17                   \
	LIMBS(Z17, Z17, Z18)                     \
	VMOVDQU64    0(BX), Z19                  \
	VMOVDQU64    64(BX), Z20                 \
	VMOVDQU64    128(BX), Z21                \
	VMOVDQU64    192(BX), Z22                \
	VMOVDQU64    384(BX), Z23                \
	VMOVDQU64    448(BX), Z24                \
	VMOVDQU64    0(R12), Z25                 \
	VMOVDQU64    64(R12), Z26                \
	PRODUCT(Z15, Z16, Z19, Z20, Z0, Z1, Z2)   \
	PRODUCT(Z15, Z16, Z21, Z22, Z3, Z4, Z5)   \
	PRODUCT(Z15, Z16, Z25, Z26, Z6, Z7, Z8)   \
	PRODUCT(Z17, Z18, Z19, Z20, Z9, Z10, Z11) \
	PRODUCT(Z15, Z16, Z23, Z24, Z12, Z13, Z14) \
	ADDQ         $640, BX                    \
	ADDQ         $640, R12                   \
	ADDQ         $8, DI                      \
	ADDQ         $8, R8

// LOAD_ACC5 loads the lane sums Z0–Z14 of the check at DX (LOAD_ACC's
// and three more); STORE_ACC5 stores them there.
#define LOAD_ACC5 \
	LOAD_ACC               \
	VMOVDQU64 768(DX), Z12 \
	VMOVDQU64 832(DX), Z13 \
	VMOVDQU64 896(DX), Z14

#define STORE_ACC5 \
	STORE_ACC              \
	VMOVDQU64 Z12, 768(DX) \
	VMOVDQU64 Z13, 832(DX) \
	VMOVDQU64 Z14, 896(DX)

// func tensor5IFMA(p *fss.Fp, prev *[5]fss.Fp, alpha0, alpha20, alpha1, alpha21 *fss.Fp, rows int, acc0, acc1 *limbAcc, index *[5][4][8]uint64, count, label, prob *fss.Fp)
//
// For 1 ≤ rows ≤ 4 rows of eight prefixes of a 5-component prefix
// vector p (prev the prefix before the first, zeros at the vector's
// start), adds to acc0 and acc1 the lane-wise sums of the two checks,
// under the row factors α (alpha0, alpha1) and α² (alpha20, alpha21),
// lane l for column l: Σ_h α_h·ΔC(h, l), Σ_h α_h·ΔL(h, l),
// Σ_h α_h·ΔM(h, l), Σ_h α_h²·ΔC(h, l) and Σ_h α_h·ΔQ(h, l), with C, L
// and Q the count, label and probability (components 0, 1 and 3), M the
// check's MAC (component 2, then 4), Δ the first differences mod p: sum
// d has its 2^0, 2^52 and 2^104 parts in acc[3d], acc[3d+1],
// acc[3d+2]. It first transposes the rows into their components (the
// permutations at index: gather5) and keeps their differences' limbs in
// its frame (DIFFS5), storing the rows' counts, labels and
// probabilities at count, label and prob if count is not nil; then each
// check's sums (SUMS5), one check after the other: their 30 lane sums
// do not fit in the registers together.
TEXT ·tensor5IFMA(SB), 0, $2560-104
	MOVQ         p+0(FP), SI
	MOVQ         prev+8(FP), BX
	MOVQ         rows+48(FP), CX
	MOVQ         index+72(FP), AX
	MOVQ         count+80(FP), R9
	MOVQ         label+88(FP), R10
	MOVQ         prob+96(FP), R11
	LEAQ         0(SP), DI
	VPBROADCASTQ mask52<>(SB), Z31
	VPBROADCASTQ 0(BX), Z0
	VPBROADCASTQ 8(BX), Z1
	VPBROADCASTQ 16(BX), Z2
	VPBROADCASTQ 24(BX), Z3
	VPBROADCASTQ 32(BX), Z4
	VMOVDQU64    0(AX), Z8
	VMOVDQU64    64(AX), Z9
	VMOVDQU64    128(AX), Z10
	VMOVDQU64    192(AX), Z11
	VMOVDQU64    256(AX), Z12
	VMOVDQU64    320(AX), Z13
	VMOVDQU64    384(AX), Z14
	VMOVDQU64    448(AX), Z15
	VMOVDQU64    512(AX), Z16
	VMOVDQU64    576(AX), Z17
	VMOVDQU64    640(AX), Z18
	VMOVDQU64    704(AX), Z19
	VMOVDQU64    768(AX), Z20
	VMOVDQU64    832(AX), Z21
	VMOVDQU64    896(AX), Z22
	VMOVDQU64    960(AX), Z23
	VMOVDQU64    1024(AX), Z24
	VMOVDQU64    1088(AX), Z25
	VMOVDQU64    1152(AX), Z26
	VMOVDQU64    1216(AX), Z27
	TESTQ        R9, R9
	JZ           diffs5

diffsKept5:
	DIFFS5(KEEP(Z5, R9), KEEP(Z5, R10), KEEP(Z5, R11))
	DECQ CX
	JNZ  diffsKept5
	JMP  sums5

diffs5:
	DIFFS5(NOKEEP, NOKEEP, NOKEEP)
	DECQ CX
	JNZ  diffs5

sums5:
	MOVQ alpha0+16(FP), DI
	MOVQ alpha20+24(FP), R8
	MOVQ acc0+56(FP), DX
	MOVQ $256, R13                  // the MAC's differences in a row: component 2
	MOVQ $2, R9                     // checks to take

check5:
	MOVQ rows+48(FP), CX
	LEAQ 0(SP), BX
	LEAQ 0(SP)(R13*1), R12
	LOAD_ACC5

rows5:
	SUMS5
	DECQ CX
	JNZ  rows5
	STORE_ACC5
	MOVQ alpha1+32(FP), DI
	MOVQ alpha21+40(FP), R8
	MOVQ acc1+64(FP), DX
	MOVQ $512, R13                  // the second MAC: component 4
	DECQ R9
	JNZ  check5
	VZEROUPPER
	RET
