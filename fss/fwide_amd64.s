//go:build amd64 && !purego

#include "textflag.h"
#include "vaes512_amd64.h"
#include "field_amd64.h"

// The field walker's fused kernels for m = 4 on VAES over ZMM registers
// and AVX-512 (fieldNode4AVX512, fieldLeaf4AVX512): the PRG's outputs go
// straight from the AES rounds into the value step, with the walk's
// state in the PRG's own layout, one or two blocks per key (fwide.go),
// so nothing is transposed and no value block goes through memory.

// wLowBit is 1 in the low 64-bit lane of a 128-bit one (hiMask is in
// vaes512_amd64.h, the other constants in field_amd64.h).
DATA wLowBit<>+0(SB)/8, $1
DATA wLowBit<>+8(SB)/8, $0
GLOBL wLowBit<>(SB), RODATA|NOPTR, $16

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
	ENC32                \
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
	ADDP512(Z9, z)

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
	ADDP512(b, z)                  \
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
	ENC32                   \
	MOVQ  valOff(DX), DI     \
	ADDQ  row, DI            \
	WVALUES32

// WNODEARGS loads a node kernel's arguments from a+0(FP): SI the seeds,
// R9 the parent's masks, R11 its values' row 0, R12 VCW's, CX n, BX the
// row stride, DX the arguments; Z11, Z14, Z15 the constants, Z13 = 0.
#define WNODEARGS \
	MOVQ            a+0(FP), DX         \
	MOVQ            0(DX), SI           \
	MOVQ            8(DX), R9           \
	MOVQ            16(DX), R11         \
	MOVQ            24(DX), R12         \
	MOVQ            96(DX), CX          \
	MOVQ            104(DX), BX         \
	VBROADCASTI32X4 hiMask<>(SB), Z15   \
	VBROADCASTI32X4 wLowBit<>(SB), Z11  \
	VPBROADCASTQ    low32<>(SB), Z14    \
	VPXORQ          Z13, Z13, Z13       \
	XORQ            R8, R8

// WNODEEND sets AX to not 0 when a word (their largest in Z13) is ≥ p.
#define WNODEEND \
	VPBROADCASTQ modulus<>(SB), Z12 \
	VPCMPUQ      $5, Z12, Z13, K3   \
	KMOVW        K3, AX             \
	VZEROUPPER

// func fieldNode4AVX512(a *node4Args) uint64
//
// The field walker's step at an inner node for m = 4 and a.n seeds, a
// multiple of 32 (fwide.go, (*fieldWalker).node4): each wanted child's
// seeds and masks, and both children's values: value block j of seed i
// holds words 2j, 2j+1, the left child's components (0, 1) and (2, 3)
// for j = 0, 1 and the right child's for j = 2, 3. Not 0 when one of
// those words is ≥ p.
TEXT ·fieldNode4AVX512(SB), NOSPLIT, $0-16
	WNODEARGS

node32:
	CMPQ CX, $32
	JB   nodeDone
	ZSIGMA32
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
	WNODEEND
	MOVQ AX, ret+8(FP)
	RET

// WLEAF(g, a, b): the shares of keys 4g … 4g+3 from their leaf words a
// (components 0, 1) and b (2, 3): canonical(addP(addP(path value, word),
// final & mask)), negated for party 1, each key's four to its staging
// row with one 32-byte store. R11, R12: the path values' and finals'
// row 0, AX, BX their row 1; R10 the row of key 4g, DX the bytes between
// rows; Z18 = pairLo, Z19 = pairHi.
#define WLEAF(g, a, b) \
	VPMAXUQ       a, Z13, Z13           \
	VPMAXUQ       b, Z13, Z13           \
	VMOVDQU64     (g*64)(R9)(R8*1), Z9  \
	VMOVDQU64     (g*64)(R11)(R8*1), Z10 \
	ADDP512(Z10, a)                     \
	VPANDQ        (g*64)(R12)(R8*1), Z9, Z10 \
	ADDP512(Z10, a)                     \
	CANON512(a)                         \
	VMOVDQU64     (g*64)(AX)(R8*1), Z10 \
	ADDP512(Z10, b)                     \
	VPANDQ        (g*64)(BX)(R8*1), Z9, Z10 \
	ADDP512(Z10, b)                     \
	CANON512(b)                         \
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

// WLEAFS01 stages the shares of components 0 … 3 of 32 keys from value
// blocks 0 and 1 (fixed keys 1 and 2, R13 the first's schedule), their σ
// in Z16…Z23, moving DI on 32 staging rows.
#define WLEAFS01 \
	MOVQ      R13, R10         \
	ENC32                      \
	VMOVDQA64 Z0, Z24          \
	VMOVDQA64 Z1, Z25          \
	VMOVDQA64 Z2, Z26          \
	VMOVDQA64 Z3, Z27          \
	VMOVDQA64 Z4, Z28          \
	VMOVDQA64 Z5, Z29          \
	VMOVDQA64 Z6, Z30          \
	VMOVDQA64 Z7, Z31          \
	LEAQ      176(R13), R10    \
	ENC32                      \
	VMOVDQU64 pairLo<>(SB), Z18 \
	VMOVDQU64 pairHi<>(SB), Z19 \
	MOVQ      DI, R10          \
	WLEAF(0, Z24, Z0)          \
	WLEAF(1, Z25, Z1)          \
	WLEAF(2, Z26, Z2)          \
	WLEAF(3, Z27, Z3)          \
	WLEAF(4, Z28, Z4)          \
	WLEAF(5, Z29, Z5)          \
	WLEAF(6, Z30, Z6)          \
	WLEAF(7, Z31, Z7)          \
	MOVQ      R10, DI

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
	VBROADCASTI32X4 hiMask<>(SB), Z15
	VPBROADCASTQ    low32<>(SB), Z14
	VPBROADCASTQ    modulus<>(SB), Z12
	VPXORQ          Z13, Z13, Z13
	XORQ            R8, R8

leaf32:
	CMPQ      CX, $32
	JB        leafDone
	ZSIGMA32
	WLEAFS01
	ADDQ      $512, R8
	SUBQ      $32, CX
	JMP       leaf32

leafDone:
	VPCMPUQ $5, Z12, Z13, K3
	KMOVW   K3, AX
	VZEROUPPER
	MOVQ    AX, ret+8(FP)
	RET

// The m = 5 kernels: a key's components (0, 1), (2, 3) and (4, 0) in
// three rows. Value block j of an inner node holds words 2j, 2j+1: the
// left child's components are blocks 0, 1 and the low word of 2, the
// right child's the high word of 2, block 3 and block 4, spliced as
// (high word of one block, low word of the next) (WSPLICE).

// WRAW(g, z): keep the raw PRG block z of keys 4g … 4g+3 in the row at
// DI for later; Z13 = the largest word so far.
#define WRAW(g, z) \
	VPMAXUQ   z, Z13, Z13 \
	VMOVDQU64 z, (g*64)(DI)(R8*1)

#define WRAW32 \
	WRAW(0, Z0) \
	WRAW(1, Z1) \
	WRAW(2, Z2) \
	WRAW(3, Z3) \
	WRAW(4, Z4) \
	WRAW(5, Z5) \
	WRAW(6, Z6) \
	WRAW(7, Z7)

// WSPLICE(g, z, b): the right child's values of a pair of components of
// keys 4g … 4g+3, addP(b, (high word of the raw block in the row at AX,
// low word of z)), to the row at R13; Z13 = the largest word so far.
#define WSPLICE(g, z, b) \
	VPMAXUQ   z, Z13, Z13              \
	VMOVDQU64 (g*64)(AX)(R8*1), Z9     \
	VSHUFPD   $0x55, z, Z9, Z10        \
	ADDP512(b, Z10)                    \
	VMOVDQU64 Z10, (g*64)(R13)(R8*1)

#define WSPLICE32 \
	WSPLICE(0, Z0, Z24) \
	WSPLICE(1, Z1, Z25) \
	WSPLICE(2, Z2, Z26) \
	WSPLICE(3, Z3, Z27) \
	WSPLICE(4, Z4, Z28) \
	WSPLICE(5, Z5, Z29) \
	WSPLICE(6, Z6, Z30) \
	WSPLICE(7, Z7, Z31)

// WLAST(g, z, b): component 4 of keys 4g … 4g+3 with a 0 after it: the
// right child's from the high word of z, to the row at R13, and the
// left child's from the low word of the raw block in the row at DI,
// written back there; b the bases.
#define WLAST(g, z, b) \
	VPSHUFD   $0xee, z, Z10                \
	VPANDNQ   Z10, Z15, Z10                \
	ADDP512(b, Z10)                        \
	VMOVDQU64 Z10, (g*64)(R13)(R8*1)       \
	VPANDNQ   (g*64)(DI)(R8*1), Z15, Z10   \
	ADDP512(b, Z10)                        \
	VMOVDQU64 Z10, (g*64)(DI)(R8*1)

#define WLAST32 \
	WLAST(0, Z0, Z24) \
	WLAST(1, Z1, Z25) \
	WLAST(2, Z2, Z26) \
	WLAST(3, Z3, Z27) \
	WLAST(4, Z4, Z28) \
	WLAST(5, Z5, Z29) \
	WLAST(6, Z6, Z30) \
	WLAST(7, Z7, Z31)

// WENC(key): Z0…Z7 = the PRG blocks under fixed key `key`.
#define WENC(key) \
	MOVQ 112(DX), R10    \
	ADDQ $(key*176), R10 \
	ENC32

// func fieldNode5AVX512(a *node4Args) uint64
//
// fieldNode4AVX512 for m = 5 (fwide.go, (*fieldWalker).node4): value
// blocks 0 … 4 under fixed keys 1 … 5, the right seed under key 6. The
// raw block 2 waits in the left child's row 2, block 3 in the right
// child's row 1, until their other halves are there. Not 0 when one of
// the ten value words is ≥ p.
TEXT ·fieldNode5AVX512(SB), NOSPLIT, $0-16
	WNODEARGS

node5_32:
	CMPQ CX, $32
	JB   node5Done
	ZSIGMA32
	WSEEDS(0, 32, 48, 64, node5Left)
	WSEEDS(1056, 40, 56, 72, node5Right)
	WBASES(R11, R12)
	WVALUEBLOCK(1, 80, $0)
	WENC(3)
	MOVQ 80(DX), DI
	LEAQ (DI)(BX*2), DI
	WRAW32
	WENC(4)
	MOVQ 88(DX), R13
	MOVQ DI, AX
	WSPLICE32
	LEAQ (R13)(BX*1), DI
	WRAW32
	LEAQ (R11)(BX*1), AX
	LEAQ (R12)(BX*1), R13
	WBASES(AX, R13)
	WVALUEBLOCK(2, 80, BX)
	WENC(5)
	MOVQ 88(DX), AX
	ADDQ BX, AX
	MOVQ AX, R13
	WSPLICE32
	LEAQ (R11)(BX*2), AX
	LEAQ (R12)(BX*2), R13
	WBASES(AX, R13)
	MOVQ 88(DX), R13
	LEAQ (R13)(BX*2), R13
	MOVQ 80(DX), DI
	LEAQ (DI)(BX*2), DI
	WLAST32
	ADDQ $512, R8
	SUBQ $32, CX
	JMP  node5_32

node5Done:
	WNODEEND
	MOVQ AX, ret+8(FP)
	RET

// WLEAF4TH(g, z, x): the shares of component 4 of keys 4g … 4g+3 from
// their leaf words z (X register x, the low word; the high one is not a
// share's and is left out of Z13 by K4), each to its staging row 32
// bytes after R10, which moves on four rows; AX, BX the path values' and
// finals' row 2, DX the bytes between rows.
#define WLEAF4TH(g, z, x) \
	VPMAXUQ        z, Z13, K4, Z13           \
	VMOVDQU64      (g*64)(R9)(R8*1), Z9      \
	VMOVDQU64      (g*64)(AX)(R8*1), Z10     \
	ADDP512(Z10, z)                          \
	VPANDQ         (g*64)(BX)(R8*1), Z9, Z10 \
	ADDP512(Z10, z)                          \
	CANON512(z)                              \
	VMOVQ          x, 32(R10)                \
	VEXTRACTI32X4  $1, z, X9                 \
	VMOVQ          X9, 32(R10)(DX*1)         \
	LEAQ           (R10)(DX*2), R10          \
	VEXTRACTI32X4  $2, z, X9                 \
	VMOVQ          X9, 32(R10)               \
	VEXTRACTI32X4  $3, z, X9                 \
	VMOVQ          X9, 32(R10)(DX*1)         \
	LEAQ           (R10)(DX*2), R10

// func fieldLeaf5AVX512(a *leaf4Args) uint64
//
// fieldLeaf4AVX512 for m = 5 (fwide.go, (*fieldWalker).leaf4): value
// block 2 (fixed key 3) first, its low word component 4, then blocks 0
// and 1 as at m = 4. Not 0 when one of the five leaf words is ≥ p.
TEXT ·fieldLeaf5AVX512(SB), NOSPLIT, $0-16
	MOVQ            a+0(FP), DX
	MOVQ            0(DX), SI   // seeds
	MOVQ            8(DX), R9   // masks
	MOVQ            16(DX), R11 // path values, row 0
	MOVQ            24(DX), R12 // finals, row 0
	MOVQ            32(DX), DI  // the staging row of key 0
	MOVQ            48(DX), CX  // n
	MOVQ            56(DX), R14 // row stride, bytes
	MOVQ            72(DX), R13 // fixed key 1's schedule
	MOVQ            64(DX), R10
	KMOVW           R10, K6     // neg
	MOVQ            $0x55, R10
	KMOVW           R10, K4     // the low words
	MOVQ            40(DX), DX  // bytes between staging rows
	VBROADCASTI32X4 hiMask<>(SB), Z15
	VPBROADCASTQ    low32<>(SB), Z14
	VPBROADCASTQ    modulus<>(SB), Z12
	VPXORQ          Z13, Z13, Z13
	XORQ            R8, R8

leaf5_32:
	CMPQ      CX, $32
	JB        leaf5Done
	ZSIGMA32
	LEAQ      352(R13), R10
	ENC32
	LEAQ      (R11)(R14*2), AX
	LEAQ      (R12)(R14*2), BX
	MOVQ      DI, R10
	WLEAF4TH(0, Z0, X0)
	WLEAF4TH(1, Z1, X1)
	WLEAF4TH(2, Z2, X2)
	WLEAF4TH(3, Z3, X3)
	WLEAF4TH(4, Z4, X4)
	WLEAF4TH(5, Z5, X5)
	WLEAF4TH(6, Z6, X6)
	WLEAF4TH(7, Z7, X7)
	LEAQ      (R11)(R14*1), AX
	LEAQ      (R12)(R14*1), BX
	WLEAFS01
	ADDQ      $512, R8
	SUBQ      $32, CX
	JMP       leaf5_32

leaf5Done:
	VPCMPUQ $5, Z12, Z13, K3
	KMOVW   K3, AX
	VZEROUPPER
	MOVQ    AX, ret+8(FP)
	RET
