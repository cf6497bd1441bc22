//go:build amd64 && !purego

#include "textflag.h"
#include "field_amd64.h"

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

// Constants of the field walker's loops, broadcast from 64 bits.
DATA signBit<>+0(SB)/8, $0x8000000000000000
GLOBL signBit<>(SB), RODATA|NOPTR, $8
DATA belowSigned<>+0(SB)/8, $0x7fffffff00000000 // (p − 1) ⊕ signBit
GLOBL belowSigned<>(SB), RODATA|NOPTR, $8

// FIELD_CONSTS loads Y15 = signBit, Y14 = low32, Y13 = (p − 1) ⊕ signBit,
// Y12 = p, Y11 = 0 (the rejection accumulator).
#define FIELD_CONSTS \
	VPBROADCASTQ signBit<>(SB), Y15     \
	VPBROADCASTQ low32<>(SB), Y14       \
	VPBROADCASTQ belowSigned<>(SB), Y13 \
	VPBROADCASTQ modulus<>(SB), Y12     \
	VPXOR        Y11, Y11, Y11

// ADDP(x, a, t1, t2): a = addP(a, x): a + x, plus 2^32 − 1 where the
// addition carried (a + x <u x, compared as signed after flipping the
// sign bits).
#define ADDP(x, a, t1, t2) \
	VPADDQ   x, a, a      \
	VPXOR    Y15, x, t1   \
	VPXOR    Y15, a, t2   \
	VPCMPGTQ t2, t1, t1   \
	VPAND    Y14, t1, t1  \
	VPADDQ   t1, a, a

// REJECT(x, t): Y11 |= (x ≥ p), lane by lane.
#define REJECT(x, t) \
	VPXOR    Y15, x, t   \
	VPCMPGTQ Y13, t, t   \
	VPOR     t, Y11, Y11

// WORDS(ptr, y, t): y = the words at ptr, ptr + 16, ptr + 32, ptr + 48
// (one word of each of four blocks; reads 8 bytes past the last).
#define WORDS(ptr, y, t) \
	VMOVDQU     0(ptr), y    \
	VMOVDQU     32(ptr), t   \
	VPUNPCKLQDQ t, y, y      \
	VPERMQ      $0xd8, y, y

// REJECTED_OUT reduces Y11 to one word in AX, all ones when a lane is set.
#define REJECTED_OUT \
	VEXTRACTI128 $1, Y11, X10 \
	VPOR         X10, X11, X11 \
	VPSHUFD      $0x4e, X11, X10 \
	VPOR         X10, X11, X11 \
	VMOVQ        X11, AX

// ADDBOTH_ARGS loads the arguments of addBothAVX2 and addBothAVX512:
// DI = left, R8 = right, SI = parent, R9 = vcw, R10 = mask, R11 = vl,
// R12 = vr, CX = n.
#define ADDBOTH_ARGS \
	MOVQ a+0(FP), DX \
	MOVQ 0(DX), DI   \
	MOVQ 8(DX), R8   \
	MOVQ 16(DX), SI  \
	MOVQ 24(DX), R9  \
	MOVQ 32(DX), R10 \
	MOVQ 40(DX), R11 \
	MOVQ 48(DX), R12 \
	MOVQ 56(DX), CX

// func addBothAVX2(a *addBothArgs) uint64
//
// For i < a.n (a multiple of 4), with base = addP(parent[i], vcw[i] &
// mask[i]): left[i] = addP(base, vl[16i]), right[i] = addP(base,
// vr[16i]) (byte offsets); all ones when a vl or vr word is ≥ p.
TEXT ·addBothAVX2(SB), NOSPLIT, $0-16
	ADDBOTH_ARGS
	FIELD_CONSTS

both4:
	CMPQ    CX, $4
	JB      bothDone
	VMOVDQU (SI), Y0
	VMOVDQU (R9), Y1
	VPAND   (R10), Y1, Y1
	ADDP(Y1, Y0, Y8, Y9) // base
	WORDS(R11, Y2, Y8)
	WORDS(R12, Y3, Y8)
	REJECT(Y2, Y8)
	REJECT(Y3, Y8)
	VMOVDQA Y0, Y4
	ADDP(Y2, Y0, Y8, Y9)
	ADDP(Y3, Y4, Y8, Y9)
	VMOVDQU Y0, (DI)
	VMOVDQU Y4, (R8)
	ADDQ    $32, SI
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $64, R11
	ADDQ    $64, R12
	SUBQ    $4, CX
	JMP     both4

bothDone:
	REJECTED_OUT
	VZEROUPPER
	MOVQ AX, ret+8(FP)
	RET

// COMPONENT(off): SI = element c = DI of the array of pointers at off(DX)
// (a leafArgs field).
#define COMPONENT(off) \
	MOVQ off(DX), SI \
	MOVQ (SI)(DI*8), SI

// func leafAVX2(a *leafArgs) uint64
//
// For i < a.n (a multiple of 4) and c < a.m: v = canonical(addP(addP(
// val[c][i], word i of words[c]), final[c][i] & mask[i])), negated mod p
// when a.neg is all ones, written to element a.at + c of output vector i;
// all ones when a word is ≥ p. R8 = 8i, BX = &outs[i], R9…R12 the four
// keys' element a.at, DI = c.
TEXT ·leafAVX2(SB), NOSPLIT, $0-16
	MOVQ         a+0(FP), DX
	MOVQ         32(DX), BX // outs
	MOVQ         40(DX), AX
	SHLQ         $3, AX     // at, in bytes
	MOVQ         56(DX), CX // n
	VPBROADCASTQ 64(DX), Y10 // neg
	FIELD_CONSTS
	VPXOR        Y7, Y7, Y7
	XORQ         R8, R8

leafGroup:
	CMPQ    CX, $4
	JB      leafDone
	MOVQ    24(DX), SI
	VMOVDQU (SI)(R8*1), Y6 // mask
	MOVQ    0(BX), R9
	ADDQ    AX, R9
	MOVQ    24(BX), R10
	ADDQ    AX, R10
	MOVQ    48(BX), R11
	ADDQ    AX, R11
	MOVQ    72(BX), R12
	ADDQ    AX, R12
	XORQ    DI, DI

leafComp:
	COMPONENT(0) // val[c]
	VMOVDQU  (SI)(R8*1), Y0
	COMPONENT(16) // words[c]
	LEAQ     (SI)(R8*2), SI // 16 bytes per key
	WORDS(SI, Y1, Y8)
	REJECT(Y1, Y8)
	ADDP(Y1, Y0, Y8, Y9)
	COMPONENT(8) // final[c]
	VMOVDQU  (SI)(R8*1), Y2
	VPAND    Y6, Y2, Y2
	ADDP(Y2, Y0, Y8, Y9)
	VPXOR    Y15, Y0, Y8 // canonical: subtract p where v ≥ p
	VPCMPGTQ Y13, Y8, Y8
	VPAND    Y12, Y8, Y8
	VPSUBQ   Y8, Y0, Y0
	VPSUBQ   Y0, Y12, Y3 // p − v
	VPCMPEQQ Y7, Y0, Y8  // v = 0
	VPANDN   Y3, Y8, Y3  // −v mod p
	VPXOR    Y0, Y3, Y3
	VPAND    Y10, Y3, Y3
	VPXOR    Y3, Y0, Y0  // v, or −v when neg
	VMOVQ    X0, (R9)(DI*8)
	VPEXTRQ  $1, X0, (R10)(DI*8)
	VEXTRACTI128 $1, Y0, X1
	VMOVQ    X1, (R11)(DI*8)
	VPEXTRQ  $1, X1, (R12)(DI*8)
	INCQ     DI
	CMPQ     DI, 48(DX)
	JB       leafComp
	ADDQ     $32, R8
	ADDQ     $96, BX
	SUBQ     $4, CX
	JMP      leafGroup

leafDone:
	REJECTED_OUT
	VZEROUPPER
	MOVQ AX, ret+8(FP)
	RET

// evenWords indexes words 0, 2, …, 14 of two ZMM registers for VPERMT2Q:
// one word of each of eight blocks.
DATA evenWords<>+0(SB)/8, $0
DATA evenWords<>+8(SB)/8, $2
DATA evenWords<>+16(SB)/8, $4
DATA evenWords<>+24(SB)/8, $6
DATA evenWords<>+32(SB)/8, $8
DATA evenWords<>+40(SB)/8, $10
DATA evenWords<>+48(SB)/8, $12
DATA evenWords<>+56(SB)/8, $14
GLOBL evenWords<>(SB), RODATA|NOPTR, $64

// WORDS512(ptr, z): z = the words at ptr, ptr + 16, …, ptr + 112 (one word
// of each of eight blocks; reads 8 bytes past the last).
#define WORDS512(ptr, z) \
	VMOVDQU64 0(ptr), z        \
	VPERMT2Q  64(ptr), Z13, z

// REJECT512(x): K4 |= (x ≥ p), lane by lane; Z12 = p.
#define REJECT512(x) \
	VPCMPUQ $5, Z12, x, K3 \
	KORW    K3, K4, K4

// func addBothAVX512(a *addBothArgs) uint64
//
// addBothAVX2 for n a multiple of 8, eight keys per instruction; not 0
// when a vl or vr word is ≥ p.
TEXT ·addBothAVX512(SB), NOSPLIT, $0-16
	ADDBOTH_ARGS
	VPBROADCASTQ low32<>(SB), Z14
	VMOVDQU64    evenWords<>(SB), Z13
	VPBROADCASTQ modulus<>(SB), Z12
	KXORW        K4, K4, K4

both8:
	CMPQ      CX, $8
	JB        both8Done
	VMOVDQU64 (SI), Z0
	VMOVDQU64 (R9), Z1
	VPANDQ    (R10), Z1, Z1
	ADDP512(Z1, Z0) // base
	WORDS512(R11, Z2)
	WORDS512(R12, Z3)
	REJECT512(Z2)
	REJECT512(Z3)
	VMOVDQA64 Z0, Z4
	ADDP512(Z2, Z0)
	ADDP512(Z3, Z4)
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z4, (R8)
	ADDQ      $64, SI
	ADDQ      $64, R9
	ADDQ      $64, R10
	ADDQ      $64, DI
	ADDQ      $64, R8
	ADDQ      $128, R11
	ADDQ      $128, R12
	SUBQ      $8, CX
	JMP       both8

both8Done:
	KMOVW      K4, AX
	VZEROUPPER
	MOVQ       AX, ret+8(FP)
	RET


// LEAF4(c8, z): z = component c of keys 8g … 8g+7 (c8 = 8c; R8 = 64g):
// canonical(addP(addP(val[c], word c&1 of value block c/2), final[c] &
// mask)), negated mod p in the lanes of K6 (party 1) that are not 0.
// Z6 = mask, Z12 = p, Z13 = evenWords, Z14 = 2^32 − 1; K4 collects the
// words ≥ p.
#define LEAF4(c8, z) \
	MOVQ      0(DX), SI          \
	MOVQ      c8(SI), SI         \
	VMOVDQU64 (SI)(R8*1), z      \
	MOVQ      16(DX), SI         \
	MOVQ      c8(SI), SI         \
	LEAQ      (SI)(R8*2), SI     \
	WORDS512(SI, Z4)             \
	REJECT512(Z4)                \
	ADDP512(Z4, z)               \
	MOVQ      8(DX), SI          \
	MOVQ      c8(SI), SI         \
	VPANDQ    (SI)(R8*1), Z6, Z5 \
	ADDP512(Z5, z)               \
	CANON512(z)

// STORE2(z, lo, hi): the low 32 bytes of z to element a.at of output
// vector lo (byte offset of its slice header from BX), the high 32 to hi.
#define STORE2(z, y, lo, hi) \
	MOVQ          lo(BX), SI           \
	VMOVDQU64     y, (SI)(R13*1)       \
	MOVQ          hi(BX), SI           \
	VEXTRACTI64X4 $1, z, (SI)(R13*1)

// func leaf4AVX512(a *leafArgs) uint64
//
// leafAVX2 for a.m = 4 and a.n a multiple of 8, eight keys per
// instruction: the four components of eight keys are computed as four
// vectors, transposed to a key's four elements in 32 bytes, and stored
// with one instruction per key instead of four. Not 0 when a word is ≥ p.
TEXT ·leaf4AVX512(SB), NOSPLIT, $0-16
	MOVQ         a+0(FP), DX
	MOVQ         32(DX), BX // outs
	MOVQ         40(DX), R13
	SHLQ         $3, R13    // at, in bytes
	MOVQ         56(DX), CX // n
	MOVQ         64(DX), AX // neg
	KMOVW        AX, K6
	VPBROADCASTQ low32<>(SB), Z14
	VMOVDQU64    evenWords<>(SB), Z13
	VPBROADCASTQ modulus<>(SB), Z12
	VMOVDQU64    pairLo<>(SB), Z15
	VMOVDQU64    pairHi<>(SB), Z16
	KXORW        K4, K4, K4
	XORQ         R8, R8

leaf8:
	CMPQ        CX, $8
	JB          leaf8Done
	MOVQ        24(DX), SI
	VMOVDQU64   (SI)(R8*1), Z6 // mask
	LEAF4(0, Z0)
	LEAF4(8, Z1)
	LEAF4(16, Z2)
	LEAF4(24, Z3)
	VPUNPCKLQDQ Z1, Z0, Z7  // (c0, c1) of keys 0, 2, 4, 6
	VPUNPCKHQDQ Z1, Z0, Z8  // … of keys 1, 3, 5, 7
	VPUNPCKLQDQ Z3, Z2, Z9  // (c2, c3) of keys 0, 2, 4, 6
	VPUNPCKHQDQ Z3, Z2, Z10 // … of keys 1, 3, 5, 7
	VMOVDQA64   Z15, Z4
	VPERMI2Q    Z9, Z7, Z4  // keys 0, 2
	VMOVDQA64   Z16, Z5
	VPERMI2Q    Z9, Z7, Z5  // keys 4, 6
	VMOVDQA64   Z15, Z11
	VPERMI2Q    Z10, Z8, Z11 // keys 1, 3
	VMOVDQA64   Z16, Z17
	VPERMI2Q    Z10, Z8, Z17 // keys 5, 7
	STORE2(Z4, Y4, 0, 48)
	STORE2(Z5, Y5, 96, 144)
	STORE2(Z11, Y11, 24, 72)
	STORE2(Z17, Y17, 120, 168)
	ADDQ        $64, R8
	ADDQ        $192, BX
	SUBQ        $8, CX
	JMP         leaf8

leaf8Done:
	KMOVW      K4, AX
	VZEROUPPER
	MOVQ       AX, ret+8(FP)
	RET
