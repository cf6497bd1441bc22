//go:build amd64 && !purego

#include "textflag.h"

// The field walker's fused kernels for m = 4 on VAES over ZMM registers
// and AVX-512 (fieldNode4AVX512, fieldLeaf4AVX512): the PRG's outputs go
// straight from the AES rounds into the value step, with the walk's
// state in the PRG's own layout, one or two blocks per key (fwide.go),
// so nothing is transposed and no value block goes through memory.

// Constants, broadcast from 64 bits or 128 bits.
DATA wHiMask<>+0(SB)/8, $0
DATA wHiMask<>+8(SB)/8, $-1
GLOBL wHiMask<>(SB), RODATA|NOPTR, $16
DATA wLowBit<>+0(SB)/8, $1
DATA wLowBit<>+8(SB)/8, $0
GLOBL wLowBit<>(SB), RODATA|NOPTR, $16
DATA wLow32<>+0(SB)/8, $0x00000000ffffffff
GLOBL wLow32<>(SB), RODATA|NOPTR, $8
DATA wModulus<>+0(SB)/8, $0xffffffff00000001
GLOBL wModulus<>(SB), RODATA|NOPTR, $8

// wPairLo and wPairHi index, over a register A of four keys' components
// (0, 1) and one B of their components (2, 3), the four components of the
// first two keys and of the last two.
DATA wPairLo<>+0(SB)/8, $0
DATA wPairLo<>+8(SB)/8, $1
DATA wPairLo<>+16(SB)/8, $8
DATA wPairLo<>+24(SB)/8, $9
DATA wPairLo<>+32(SB)/8, $2
DATA wPairLo<>+40(SB)/8, $3
DATA wPairLo<>+48(SB)/8, $10
DATA wPairLo<>+56(SB)/8, $11
GLOBL wPairLo<>(SB), RODATA|NOPTR, $64
DATA wPairHi<>+0(SB)/8, $4
DATA wPairHi<>+8(SB)/8, $5
DATA wPairHi<>+16(SB)/8, $12
DATA wPairHi<>+24(SB)/8, $13
DATA wPairHi<>+32(SB)/8, $6
DATA wPairHi<>+40(SB)/8, $7
DATA wPairHi<>+48(SB)/8, $14
DATA wPairHi<>+56(SB)/8, $15
GLOBL wPairHi<>(SB), RODATA|NOPTR, $64

// WSIGMA(i, z): z = σ(seeds 4i … 4i+3 at SI); Z15 = wHiMask, Z9 scratch.
#define WSIGMA(i, z) \
	VMOVDQU64 (i*64)(SI), z \
	VPSHUFD   $0x4e, z, Z9  \
	VPANDQ    Z15, z, z     \
	VPXORQ    Z9, z, z

#define WSIGMA32 \
	WSIGMA(0, Z16) \
	WSIGMA(1, Z17) \
	WSIGMA(2, Z18) \
	WSIGMA(3, Z19) \
	WSIGMA(4, Z20) \
	WSIGMA(5, Z21) \
	WSIGMA(6, Z22) \
	WSIGMA(7, Z23) \
	ADDQ $512, SI

#define WROUND(off) \
	VBROADCASTI32X4 off(R10), Z8 \
	VAESENC         Z8, Z0, Z0 \
	VAESENC         Z8, Z1, Z1 \
	VAESENC         Z8, Z2, Z2 \
	VAESENC         Z8, Z3, Z3 \
	VAESENC         Z8, Z4, Z4 \
	VAESENC         Z8, Z5, Z5 \
	VAESENC         Z8, Z6, Z6 \
	VAESENC         Z8, Z7, Z7

// WENC32 sets Z0…Z7 to H(σ in Z16…Z23) = AES(σ) ⊕ σ under the schedule
// at R10, four seeds per register.
#define WENC32 \
	VBROADCASTI32X4 (R10), Z8 \
	VPXORQ          Z8, Z16, Z0 \
	VPXORQ          Z8, Z17, Z1 \
	VPXORQ          Z8, Z18, Z2 \
	VPXORQ          Z8, Z19, Z3 \
	VPXORQ          Z8, Z20, Z4 \
	VPXORQ          Z8, Z21, Z5 \
	VPXORQ          Z8, Z22, Z6 \
	VPXORQ          Z8, Z23, Z7 \
	WROUND(16) \
	WROUND(32) \
	WROUND(48) \
	WROUND(64) \
	WROUND(80) \
	WROUND(96) \
	WROUND(112) \
	WROUND(128) \
	WROUND(144) \
	VBROADCASTI32X4 160(R10), Z8 \
	VAESENCLAST     Z8, Z0, Z0 \
	VAESENCLAST     Z8, Z1, Z1 \
	VAESENCLAST     Z8, Z2, Z2 \
	VAESENCLAST     Z8, Z3, Z3 \
	VAESENCLAST     Z8, Z4, Z4 \
	VAESENCLAST     Z8, Z5, Z5 \
	VAESENCLAST     Z8, Z6, Z6 \
	VAESENCLAST     Z8, Z7, Z7 \
	VPXORQ          Z16, Z0, Z0 \
	VPXORQ          Z17, Z1, Z1 \
	VPXORQ          Z18, Z2, Z2 \
	VPXORQ          Z19, Z3, Z3 \
	VPXORQ          Z20, Z4, Z4 \
	VPXORQ          Z21, Z5, Z5 \
	VPXORQ          Z22, Z6, Z6 \
	VPXORQ          Z23, Z7, Z7

// WADDP(x, a): a = addP(a, x): a + x, plus 2^32 − 1 (Z14) in the lanes
// where the addition carried (a + x <u x).
#define WADDP(x, a) \
	VPADDQ  x, a, a      \
	VPCMPUQ $1, x, a, K2 \
	VPADDQ  Z14, a, K2, a

// WCHILD(g, z): from the child seed blocks z of keys 4g … 4g+3, the
// corrected seeds (z ⊕ cw & mask, least significant bit cleared) to
// (DI) and their control bits as masks of both words to (R13); AX = the
// side's seed corrections, R9 = the parent's masks, Z11 = wLowBit.
#define WCHILD(g, z) \
	VMOVDQU64 (g*64)(R9)(R8*1), Z9  \
	VPANDQ    (g*64)(AX)(R8*1), Z9, Z9 \
	VPXORQ    Z9, z, z              \
	VPSLLQ    $63, z, Z9            \
	VPSRAQ    $63, Z9, Z9           \
	VPSHUFD   $0x44, Z9, Z9         \
	VMOVDQU64 Z9, (g*64)(R13)(R8*1) \
	VPANDNQ   z, Z11, z             \
	VMOVDQU64 z, (g*64)(DI)(R8*1)

#define WCHILD32 \
	WCHILD(0, Z0) \
	WCHILD(1, Z1) \
	WCHILD(2, Z2) \
	WCHILD(3, Z3) \
	WCHILD(4, Z4) \
	WCHILD(5, Z5) \
	WCHILD(6, Z6) \
	WCHILD(7, Z7)

// WSEEDS(keyOff, cwOff, seedOff, maskOff, skip): when the child seed
// output at seedOff(DX) is not nil, encrypt under the schedule at keyOff
// from the fixed keys and write that child's seeds and masks.
#define WSEEDS(keyOff, cwOff, seedOff, maskOff, skip) \
	MOVQ  seedOff(DX), DI \
	TESTQ DI, DI          \
	JZ    skip            \
	MOVQ  112(DX), R10    \
	ADDQ  $keyOff, R10    \
	WENC32                \
	MOVQ  cwOff(DX), AX   \
	MOVQ  maskOff(DX), R13 \
	WCHILD32              \
skip:

// WBASE(g, pv, vc, z): z = addP(path value, VCW & mask) of keys 4g … 4g+3
// for one pair of components, from the rows at pv and vc.
#define WBASE(g, pv, vc, z) \
	VMOVDQU64 (g*64)(pv)(R8*1), z  \
	VMOVDQU64 (g*64)(vc)(R8*1), Z9 \
	VPANDQ    (g*64)(R9)(R8*1), Z9, Z9 \
	WADDP(Z9, z)

#define WBASES(pv, vc) \
	WBASE(0, pv, vc, Z24) \
	WBASE(1, pv, vc, Z25) \
	WBASE(2, pv, vc, Z26) \
	WBASE(3, pv, vc, Z27) \
	WBASE(4, pv, vc, Z28) \
	WBASE(5, pv, vc, Z29) \
	WBASE(6, pv, vc, Z30) \
	WBASE(7, pv, vc, Z31)

// WVALUE(g, z, b): z = addP(b, z), the child's values of a pair of
// components of keys 4g … 4g+3 from the PRG words z and the bases b, to
// the row at DI; Z13 = the largest word so far.
#define WVALUE(g, z, b) \
	VPMAXUQ   z, Z13, Z13          \
	WADDP(b, z)                    \
	VMOVDQU64 z, (g*64)(DI)(R8*1)

#define WVALUES32 \
	WVALUE(0, Z0, Z24) \
	WVALUE(1, Z1, Z25) \
	WVALUE(2, Z2, Z26) \
	WVALUE(3, Z3, Z27) \
	WVALUE(4, Z4, Z28) \
	WVALUE(5, Z5, Z29) \
	WVALUE(6, Z6, Z30) \
	WVALUE(7, Z7, Z31)

// WVALUEBLOCK(key, valOff, row): encrypt under fixed key `key` (value
// block key − 1) and write the child's values of one pair of components
// to the row at valOff(DX) + row.
#define WVALUEBLOCK(key, valOff, row) \
	MOVQ  112(DX), R10       \
	ADDQ  $(key*176), R10    \
	WENC32                   \
	MOVQ  valOff(DX), DI     \
	ADDQ  row, DI            \
	WVALUES32

// func fieldNode4AVX512(a *node4Args) uint64
//
// The field walker's step at an inner node for m = 4 and a.n seeds, a
// multiple of 32 (fwide.go, (*fieldWalker).node4): each wanted child's
// seeds and masks, and both children's values: value block j of seed i
// holds words 2j, 2j+1, the left child's components (0, 1) and (2, 3)
// for j = 0, 1 and the right child's for j = 2, 3. Not 0 when one of
// those words is ≥ p.
TEXT ·fieldNode4AVX512(SB), NOSPLIT, $0-16
	MOVQ            a+0(FP), DX
	MOVQ            0(DX), SI   // seeds
	MOVQ            8(DX), R9   // parent masks
	MOVQ            16(DX), R11 // parent values, row 0
	MOVQ            24(DX), R12 // VCW, row 0
	MOVQ            96(DX), CX  // n
	MOVQ            104(DX), BX // row stride, bytes
	VBROADCASTI32X4 wHiMask<>(SB), Z15
	VBROADCASTI32X4 wLowBit<>(SB), Z11
	VPBROADCASTQ    wLow32<>(SB), Z14
	VPXORQ          Z13, Z13, Z13
	XORQ            R8, R8

node32:
	CMPQ CX, $32
	JB   nodeDone
	WSIGMA32
	WSEEDS(0, 32, 48, 64, nodeLeft)
	WSEEDS(880, 40, 56, 72, nodeRight)
	WBASES(R11, R12)
	WVALUEBLOCK(1, 80, $0)
	WVALUEBLOCK(3, 88, $0)
	LEAQ (R11)(BX*1), AX
	LEAQ (R12)(BX*1), R13
	WBASES(AX, R13)
	WVALUEBLOCK(2, 80, BX)
	WVALUEBLOCK(4, 88, BX)
	ADDQ $512, R8
	SUBQ $32, CX
	JMP  node32

nodeDone:
	VPBROADCASTQ wModulus<>(SB), Z12
	VPCMPUQ      $5, Z12, Z13, K3
	KMOVW        K3, AX
	VZEROUPPER
	MOVQ         AX, ret+8(FP)
	RET

// WCANON(z): z = canonical(z), negated mod p in the lanes of K6 (party 1)
// that are not 0; Z12 = p.
#define WCANON(z) \
	VPCMPUQ  $5, Z12, z, K3 \
	VPSUBQ   Z12, z, K3, z  \
	VPTESTMQ z, z, K6, K5   \
	VPSUBQ   z, Z12, K5, z

// WLEAF(g, a, b): the shares of keys 4g … 4g+3 from their leaf words a
// (components 0, 1) and b (2, 3): canonical(addP(addP(path value, word),
// final & mask)), negated for party 1, each key's four to its staging
// row with one 32-byte store. R11, R12: the path values' and finals'
// row 0, AX, BX their row 1; R10 the row of key 4g, DX the bytes between
// rows; Z18 = wPairLo, Z19 = wPairHi.
#define WLEAF(g, a, b) \
	VPMAXUQ       a, Z13, Z13           \
	VPMAXUQ       b, Z13, Z13           \
	VMOVDQU64     (g*64)(R9)(R8*1), Z9  \
	VMOVDQU64     (g*64)(R11)(R8*1), Z10 \
	WADDP(Z10, a)                       \
	VPANDQ        (g*64)(R12)(R8*1), Z9, Z10 \
	WADDP(Z10, a)                       \
	WCANON(a)                           \
	VMOVDQU64     (g*64)(AX)(R8*1), Z10 \
	WADDP(Z10, b)                       \
	VPANDQ        (g*64)(BX)(R8*1), Z9, Z10 \
	WADDP(Z10, b)                       \
	WCANON(b)                           \
	VMOVDQA64     Z18, Z10              \
	VPERMI2Q      b, a, Z10             \
	VMOVDQA64     Z19, Z9               \
	VPERMI2Q      b, a, Z9              \
	VMOVDQU       Y10, (R10)            \
	VEXTRACTI64X4 $1, Z10, (R10)(DX*1)  \
	LEAQ          (R10)(DX*2), R10      \
	VMOVDQU       Y9, (R10)             \
	VEXTRACTI64X4 $1, Z9, (R10)(DX*1)   \
	LEAQ          (R10)(DX*2), R10

// func fieldLeaf4AVX512(a *leaf4Args) uint64
//
// The field walker's leaf step for m = 4 and a.n seeds, a multiple of
// 32 (fwide.go, (*fieldWalker).leaf4): value blocks 0 and 1 of each seed
// are its leaf words, components (0, 1) and (2, 3). Not 0 when one of
// those words is ≥ p.
TEXT ·fieldLeaf4AVX512(SB), NOSPLIT, $0-16
	MOVQ            a+0(FP), DX
	MOVQ            0(DX), SI   // seeds
	MOVQ            8(DX), R9   // masks
	MOVQ            16(DX), R11 // path values, row 0
	MOVQ            24(DX), R12 // finals, row 0
	MOVQ            32(DX), DI  // the staging row of key 0
	MOVQ            48(DX), CX  // n
	MOVQ            56(DX), BX  // row stride, bytes
	LEAQ            (R11)(BX*1), AX
	LEAQ            (R12)(BX*1), BX
	MOVQ            72(DX), R13 // fixed key 1's schedule
	MOVQ            64(DX), R10
	KMOVW           R10, K6     // neg
	MOVQ            40(DX), DX  // bytes between staging rows
	VBROADCASTI32X4 wHiMask<>(SB), Z15
	VPBROADCASTQ    wLow32<>(SB), Z14
	VPBROADCASTQ    wModulus<>(SB), Z12
	VPXORQ          Z13, Z13, Z13
	XORQ            R8, R8

leaf32:
	CMPQ      CX, $32
	JB        leafDone
	WSIGMA32
	MOVQ      R13, R10
	WENC32
	VMOVDQA64 Z0, Z24
	VMOVDQA64 Z1, Z25
	VMOVDQA64 Z2, Z26
	VMOVDQA64 Z3, Z27
	VMOVDQA64 Z4, Z28
	VMOVDQA64 Z5, Z29
	VMOVDQA64 Z6, Z30
	VMOVDQA64 Z7, Z31
	LEAQ      176(R13), R10
	WENC32
	VMOVDQU64 wPairLo<>(SB), Z18
	VMOVDQU64 wPairHi<>(SB), Z19
	MOVQ      DI, R10
	WLEAF(0, Z24, Z0)
	WLEAF(1, Z25, Z1)
	WLEAF(2, Z26, Z2)
	WLEAF(3, Z27, Z3)
	WLEAF(4, Z28, Z4)
	WLEAF(5, Z29, Z5)
	WLEAF(6, Z30, Z6)
	WLEAF(7, Z31, Z7)
	MOVQ      R10, DI
	ADDQ      $512, R8
	SUBQ      $32, CX
	JMP       leaf32

leafDone:
	VPCMPUQ $5, Z12, Z13, K3
	KMOVW   K3, AX
	VZEROUPPER
	MOVQ    AX, ret+8(FP)
	RET
