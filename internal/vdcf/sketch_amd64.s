//go:build amd64 && !purego

#include "textflag.h"
#include "limbs_amd64.h"

// INDEX(name, …) is an eight-word permutation table.
#define INDEX(name, i0, i1, i2, i3, i4, i5, i6, i7) \
	DATA name<>+0(SB)/8, $i0              \
	DATA name<>+8(SB)/8, $i1              \
	DATA name<>+16(SB)/8, $i2             \
	DATA name<>+24(SB)/8, $i3             \
	DATA name<>+32(SB)/8, $i4             \
	DATA name<>+40(SB)/8, $i5             \
	DATA name<>+48(SB)/8, $i6             \
	DATA name<>+56(SB)/8, $i7             \
	GLOBL name<>(SB), RODATA|NOPTR, $64

// Permutations that gather, from two rows of four prefixes (16 words
// P[4j + c]), component c of each into the low four words.
INDEX(idx4C0, 0, 4, 8, 12, 0, 0, 0, 0)
INDEX(idx4C1, 1, 5, 9, 13, 0, 0, 0, 0)
INDEX(idx4C2, 2, 6, 10, 14, 0, 0, 0, 0)
INDEX(idx4C3, 3, 7, 11, 15, 0, 0, 0, 0)

// GATHER4(index, dst): dst = one component of the eight prefixes of a
// 4-component vector in Z15–Z18, through Z24.
#define GATHER4(index, dst) \
	VMOVDQA64    Z15, dst       \
	VPERMT2Q     Z16, index, dst \
	VMOVDQA64    Z17, Z24       \
	VPERMT2Q     Z18, index, Z24 \
	VINSERTI64X4 $1, Y24, dst, dst


// LOAD4 loads the row of eight prefixes at SI (four components each) to
// Z15–Z18.
#define LOAD4 \
	VMOVDQU64 0(SI), Z15   \
	VMOVDQU64 64(SI), Z16  \
	VMOVDQU64 128(SI), Z17 \
	VMOVDQU64 192(SI), Z18

// ROW4 loads the row of eight prefixes at SI (LOAD4), and α_h at DI and
// α_h² at R8 as limbs to Z27, Z28 and Z29, Z30.
#define ROW4 \
	LOAD4                    \
	VPBROADCASTQ (DI), Z27   \
	LIMBS(Z27, Z27, Z28)     \
	VPBROADCASTQ (R8), Z29   \
	LIMBS(Z29, Z29, Z30)

// SUM4(prev, z0, z1, z2): z0 + 2^52·z1 + 2^104·z2 += α_h·ΔZ22, the
// first differences of the component gathered in Z22 (DIFF to Z23), whose
// limbs stay in Z25, Z26.
#define SUM4(prev, z0, z1, z2) \
	DIFF(Z22, prev, Z23)       \
	LIMBS(Z23, Z25, Z26)       \
	PRODUCT(Z27, Z28, Z25, Z26, z0, z1, z2)

// CHECK4 adds one row's sums of one check: the count's (and its square's,
// Z9–Z11), the label's, and the MAC's, gathered by Z21; the count and the
// label gathered first, by Z19 and Z20, each followed by `keep`.
#define CHECK4(keepCount, keepLabel) \
	GATHER4(Z19, Z22)                 \
	keepCount                         \
	SUM4(Z12, Z0, Z1, Z2)             \
	PRODUCT(Z29, Z30, Z25, Z26, Z9, Z10, Z11) \
	GATHER4(Z20, Z22)                 \
	keepLabel                         \
	SUM4(Z13, Z3, Z4, Z5)             \
	GATHER4(Z21, Z22)                 \
	SUM4(Z14, Z6, Z7, Z8)             \
	ADDQ         $256, SI             \
	ADDQ         $8, DI               \
	ADDQ         $8, R8

// func tensor4IFMA(p *fss.Fp, prev *[4]fss.Fp, alpha0, alpha20, alpha1, alpha21 *fss.Fp, rows int, acc0, acc1 *[12][8]uint64, count, label *fss.Fp)
//
// For rows ≥ 1 rows of eight prefixes of a 4-component prefix vector p
// (prev the prefix before the first, zeros at the vector's start), adds
// to acc0 and acc1 the lane-wise sums of the two checks, under the row
// factors α (alpha0, alpha1) and α² (alpha20, alpha21), lane l for
// column l: Σ_h α_h·ΔC(h, l), Σ_h α_h·ΔL(h, l), Σ_h α_h·ΔM(h, l) and
// Σ_h α_h²·ΔC(h, l), with C, L the count and label (components 0 and
// 1), M the check's MAC (component 2, then 3), Δ the first differences
// mod p: sum d has its 2^0, 2^52 and 2^104 parts in acc[3d], acc[3d+1],
// acc[3d+2]. If count is not nil, it stores the rows' counts at count
// and their labels at label.
TEXT ·tensor4IFMA(SB), NOSPLIT, $0-88
	MOVQ         p+0(FP), SI
	MOVQ         prev+8(FP), BX
	MOVQ         alpha0+16(FP), DI
	MOVQ         alpha20+24(FP), R8
	MOVQ         rows+48(FP), CX
	MOVQ         acc0+56(FP), DX
	MOVQ         count+72(FP), R9
	MOVQ         label+80(FP), R10
	VPBROADCASTQ mask52<>(SB), Z31
	VMOVDQU64    idx4C0<>(SB), Z19
	VMOVDQU64    idx4C1<>(SB), Z20
	VMOVDQU64    idx4C2<>(SB), Z21
	VPBROADCASTQ 0(BX), Z12
	VPBROADCASTQ 8(BX), Z13
	VPBROADCASTQ 16(BX), Z14
	LOAD_ACC
	TESTQ        R9, R9
	JZ           first

firstKept:
	ROW4
	CHECK4(KEEP(Z22, R9), KEEP(Z22, R10))
	DECQ         CX
	JNZ          firstKept
	JMP          second

first:
	ROW4
	CHECK4(NOKEEP, NOKEEP)
	DECQ         CX
	JNZ          first

second:
	STORE_ACC
	MOVQ         p+0(FP), SI
	MOVQ         alpha1+32(FP), DI
	MOVQ         alpha21+40(FP), R8
	MOVQ         rows+48(FP), CX
	MOVQ         acc1+64(FP), DX
	VMOVDQU64    idx4C3<>(SB), Z21
	VPBROADCASTQ 0(BX), Z12
	VPBROADCASTQ 8(BX), Z13
	VPBROADCASTQ 24(BX), Z14
	LOAD_ACC

secondRows:
	ROW4
	CHECK4(NOKEEP, NOKEEP)
	DECQ         CX
	JNZ          secondRows
	STORE_ACC
	VZEROUPPER
	RET

// func keep4AVX512(p *fss.Fp, rows int, count, label *fss.Fp)
//
// For rows ≥ 1 rows of eight prefixes of a 4-component prefix vector p,
// stores their counts at count and their labels at label.
TEXT ·keep4AVX512(SB), NOSPLIT, $0-32
	MOVQ      p+0(FP), SI
	MOVQ      rows+8(FP), CX
	MOVQ      count+16(FP), R9
	MOVQ      label+24(FP), R10
	VMOVDQU64 idx4C0<>(SB), Z19
	VMOVDQU64 idx4C1<>(SB), Z20

keep4:
	LOAD4
	GATHER4(Z19, Z22)
	KEEP(Z22, R9)
	GATHER4(Z20, Z22)
	KEEP(Z22, R10)
	ADDQ      $256, SI
	DECQ      CX
	JNZ       keep4
	VZEROUPPER
	RET

// ADD_LAZY(x, at, k): the eight words at `at` += x as words congruent mod
// p: a sum that carries (is below x) gets the lost 2^64 ≡ 2^32 − 1 back
// (Z30), which cannot carry again (fss.AddLazy).
#define ADD_LAZY(x, at, k) \
	VMOVDQU64 at, Z16           \
	VPADDQ    x, Z16, Z16       \
	VPCMPUQ   $1, x, Z16, k     \
	VPADDQ    Z30, Z16, k, Z16  \
	VMOVDQU64 Z16, at

// func addLazyAVX512(sum *uint64, x *fss.Fp, n int)
//
// For n words (a multiple of 8), adds x[i] to sum[i] as words congruent
// mod p, eight per instruction (ADD_LAZY).
TEXT ·addLazyAVX512(SB), NOSPLIT, $0-24
	MOVQ         sum+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ twoTo32m1<>(SB), Z30
	TESTQ        CX, CX
	JZ           addedLazy

addLazy:
	VMOVDQU64 (SI), Z15
	ADD_LAZY(Z15, (DI), K1)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       addLazy

addedLazy:
	VZEROUPPER
	RET

// func squareAVX512(dst, src *fss.Fp, n int)
//
// For n elements (a multiple of 8) of F_p, sets dst[i] = src[i]² mod p,
// eight per instruction: the 128-bit square hh·2^64 + 2·lh·2^32 + ll
// from the halves' 32-bit products, reduced as fss's reduce128 does
// (2^64 ≡ 2^32 − 1, 2^96 ≡ −1).
TEXT ·squareAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VPBROADCASTQ twoTo32m1<>(SB), Z30 // 2^32 − 1, the low half of a word
	VPBROADCASTQ modulus<>(SB), Z29
	VPTERNLOGQ   $0xff, Z28, Z28, Z28 // −1 in every lane
	TESTQ        CX, CX
	JZ           squared

square:
	VMOVDQU64 (SI), Z0
	VPSRLQ    $32, Z0, Z1          // xh
	VPMULUDQ  Z0, Z0, Z2           // ll = xl·xl
	VPMULUDQ  Z1, Z0, Z3           // lh = xl·xh
	VPMULUDQ  Z1, Z1, Z4           // hh = xh·xh
	VPSLLQ    $33, Z3, Z5
	VPADDQ    Z5, Z2, Z5           // lo = ll + (lh << 33)
	VPCMPUQ   $1, Z2, Z5, K1       // carried: lo < ll
	VPSRLQ    $31, Z3, Z3
	VPADDQ    Z3, Z4, Z4           // hi = hh + (lh >> 31)
	VPSUBQ    Z28, Z4, K1, Z4      // + 1 if lo carried
	VPSRLQ    $32, Z4, Z6          // h1
	VPANDQ    Z30, Z4, Z7          // h0
	VPCMPUQ   $1, Z6, Z5, K2       // borrow: lo < h1
	VPSUBQ    Z6, Z5, Z5           // t = lo − h1
	VPSUBQ    Z30, Z5, K2, Z5      // − (2^32 − 1) if borrowed
	VPSLLQ    $32, Z7, Z8
	VPSUBQ    Z7, Z8, Z8           // h0·2^32 − h0
	VPADDQ    Z8, Z5, Z8           // s = t + h0·2^32 − h0
	VPCMPUQ   $1, Z5, Z8, K3       // carry: s < t
	VPADDQ    Z30, Z8, K3, Z8      // + (2^32 − 1) if carried
	VPCMPUQ   $5, Z29, Z8, K4      // s ≥ p
	VPSUBQ    Z29, Z8, K4, Z8
	VMOVDQU64 Z8, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       square

squared:
	VZEROUPPER
	RET
