//go:build amd64 && !purego

#include "textflag.h"
#include "vaes512_amd64.h"

// hiMask (vaes512_amd64.h) selects the high 64-bit lane of an XMM register.

// SIGMA(x, tmp) replaces x = (lo, hi) by σ(x) = (hi, lo ⊕ hi); X15 = hiMask.
#define SIGMA(x, tmp) \
	PSHUFD $0x4e, x, tmp \
	PAND   X15, x        \
	PXOR   tmp, x

// SIGMA_TO_SCRATCH(i): scratch[i] = σ(seed i at SI).
#define SIGMA_TO_SCRATCH(i) \
	MOVOU (i*16)(SI), X0    \
	SIGMA(X0, X9)           \
	MOVOU X0, (i*16)(R9)

#define WHITEN(i, x) \
	MOVOU (i*16)(R9), x \
	PXOR  X8, x

#define ROUND8(off) \
	MOVOU  off(R10), X8 \
	AESENC X8, X0       \
	AESENC X8, X1       \
	AESENC X8, X2       \
	AESENC X8, X3       \
	AESENC X8, X4       \
	AESENC X8, X5       \
	AESENC X8, X6       \
	AESENC X8, X7

#define LAST8 \
	MOVOU      160(R10), X8 \
	AESENCLAST X8, X0       \
	AESENCLAST X8, X1       \
	AESENCLAST X8, X2       \
	AESENCLAST X8, X3       \
	AESENCLAST X8, X4       \
	AESENCLAST X8, X5       \
	AESENCLAST X8, X6       \
	AESENCLAST X8, X7

// FEED(i, x): x ^= scratch[i], the MMO feed-forward.
#define FEED(i, x) \
	MOVOU (i*16)(R9), X9 \
	PXOR  X9, x

#define ROUND1(off) \
	MOVOU  off(R10), X8 \
	AESENC X8, X0

// ENC8 encrypts X0…X7 = scratch blocks 0…7 under the schedule at R10 and
// adds the MMO feed-forward: Xi = AES(σ_i) ⊕ σ_i.
#define ENC8 \
	MOVOU (R10), X8   \
	WHITEN(0, X0)     \
	WHITEN(1, X1)     \
	WHITEN(2, X2)     \
	WHITEN(3, X3)     \
	WHITEN(4, X4)     \
	WHITEN(5, X5)     \
	WHITEN(6, X6)     \
	WHITEN(7, X7)     \
	ROUND8(16)        \
	ROUND8(32)        \
	ROUND8(48)        \
	ROUND8(64)        \
	ROUND8(80)        \
	ROUND8(96)        \
	ROUND8(112)       \
	ROUND8(128)       \
	ROUND8(144)       \
	LAST8             \
	FEED(0, X0)       \
	FEED(1, X1)       \
	FEED(2, X2)       \
	FEED(3, X3)       \
	FEED(4, X4)       \
	FEED(5, X5)       \
	FEED(6, X6)       \
	FEED(7, X7)

// ENC1 is ENC8 for X0 alone.
#define ENC1 \
	MOVOU      (R10), X8 \
	WHITEN(0, X0)        \
	ROUND1(16)           \
	ROUND1(32)           \
	ROUND1(48)           \
	ROUND1(64)           \
	ROUND1(80)           \
	ROUND1(96)           \
	ROUND1(112)          \
	ROUND1(128)          \
	ROUND1(144)          \
	MOVOU      160(R10), X8 \
	AESENCLAST X8, X0    \
	FEED(0, X0)

#define SIGMA8 \
	SIGMA_TO_SCRATCH(0) \
	SIGMA_TO_SCRATCH(1) \
	SIGMA_TO_SCRATCH(2) \
	SIGMA_TO_SCRATCH(3) \
	SIGMA_TO_SCRATCH(4) \
	SIGMA_TO_SCRATCH(5) \
	SIGMA_TO_SCRATCH(6) \
	SIGMA_TO_SCRATCH(7) \
	ADDQ $128, SI

#define STORE8 \
	MOVOU X0, 0(R11)   \
	MOVOU X1, 16(R11)  \
	MOVOU X2, 32(R11)  \
	MOVOU X3, 48(R11)  \
	MOVOU X4, 64(R11)  \
	MOVOU X5, 80(R11)  \
	MOVOU X6, 96(R11)  \
	MOVOU X7, 112(R11)

// SUM8 adds X0 + … + X7 to the block at R11 (two 64-bit lanes).
#define SUM8 \
	PADDQ X1, X0    \
	PADDQ X3, X2    \
	PADDQ X5, X4    \
	PADDQ X7, X6    \
	PADDQ X2, X0    \
	PADDQ X6, X4    \
	PADDQ X4, X0    \
	MOVOU (R11), X9 \
	PADDQ X9, X0    \
	MOVOU X0, (R11)

// SEEDS(enc, store, args, keyOff, outOff, skip): if the schedule at
// keyOff(args) is not nil, encrypt the scratch seeds under it and store
// them at outOff(args) + R8.
#define SEEDS(enc, store, keyOff, outOff, skip) \
	MOVQ  keyOff(DX), R10 \
	TESTQ R10, R10        \
	JZ    skip            \
	enc                   \
	MOVQ  outOff(DX), R11 \
	ADDQ  R8, R11         \
	store                 \
skip:

#define STORE1 MOVOU X0, (R11)

#define SUM1 \
	MOVOU (R11), X9 \
	PADDQ X9, X0    \
	MOVOU X0, (R11)

// VALUES(enc, sum, store, loop, sloop, skip): for each value key j, add
// the seeds' hashes to sums[j], or, when the stride at 80(args) is not
// zero, store them at sums + j·stride + R8, one block per seed.
#define VALUES(enc, sum, store, loop, sloop, skip) \
	MOVQ  24(DX), R13 \
	TESTQ R13, R13    \
	JZ    skip        \
	MOVQ  16(DX), R10 \
	MOVQ  48(DX), R11 \
	MOVQ  80(DX), R12 \
	TESTQ R12, R12    \
	JZ    loop        \
	ADDQ  R8, R11     \
sloop:                \
	enc               \
	store             \
	ADDQ  $176, R10   \
	ADDQ  R12, R11    \
	DECQ  R13         \
	JNZ   sloop       \
	JMP   skip        \
loop:                 \
	enc               \
	sum               \
	ADDQ  $176, R10   \
	ADDQ  $16, R11    \
	DECQ  R13         \
	JNZ   loop        \
skip:

// PRG_ARGS loads the arguments of prgNodeAsm and prgNodeVAES: DX = a,
// SI = seeds, CX = seeds left, R9 = scratch, R8 = 0, the byte offset of
// the current seeds' outputs.
#define PRG_ARGS \
	MOVQ a+0(FP), DX \
	MOVQ 56(DX), SI  \
	MOVQ 64(DX), CX  \
	MOVQ 72(DX), R9  \
	XORQ R8, R8

// GROUPS(group, width, bytes, sigma, enc, store, sum, left, right, values,
// svalues, vdone, exit) runs groups of width seeds (bytes of blocks) while
// there are, then goes on at exit: sigma to scratch, then each output's
// keys.
#define GROUPS(group, width, bytes, sigma, enc, store, sum, left, right, values, svalues, vdone, exit) \
group:                                   \
	CMPQ CX, $width                      \
	JB   exit                            \
	sigma                                \
	SEEDS(enc, store, 0, 32, left)       \
	SEEDS(enc, store, 8, 40, right)      \
	VALUES(enc, sum, store, values, svalues, vdone) \
	ADDQ $bytes, R8                      \
	SUBQ $width, CX                      \
	JMP  group

// func prgNodeAsm(a *prgNodeArgs)
//
// For the n seeds at a.seeds: a.left[i] = H(leftKey, seed i) and
// a.right[i] = H(rightKey, seed i) when those keys are not nil, and
// a.sums[j] += Σ_i H(valueKeys[j], seed i) for j < a.values, where
// H(k, x) = AES_k(σ(x)) ⊕ σ(x); or, when a.valueStride is not zero, the
// block at byte offset j·a.valueStride + 16i from a.sums is H(valueKeys[j],
// seed i). Eight seeds in flight, then one at a time.
TEXT ·prgNodeAsm(SB), NOSPLIT, $0-8
	PRG_ARGS
	MOVOU hiMask<>(SB), X15
	GROUPS(group8, 8, 128, SIGMA8, ENC8, STORE8, SUM8, left8, right8, values8, svalues8, done8, tail)

tail:
	TESTQ CX, CX
	JZ    done
	SIGMA_TO_SCRATCH(0)
	ADDQ  $16, SI
	SEEDS(ENC1, STORE1, 0, 32, left1)
	SEEDS(ENC1, STORE1, 8, 40, right1)
	VALUES(ENC1, SUM1, STORE1, values1, svalues1, done1)
	ADDQ  $16, R8
	DECQ  CX
	JMP   tail

done:
	RET

// func hasAESNI() bool
TEXT ·hasAESNI(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	SHRL $25, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)
	RET

// VAES path: sixteen seeds in flight as eight YMM registers of two blocks
// each, every round key broadcast to both lanes. Y15 = hiMask in both
// lanes; Y8 round key, Y9 scratch.

// VSIGMA_TO_SCRATCH(i): scratch pair i = σ(seed pair i at SI).
#define VSIGMA_TO_SCRATCH(i) \
	VMOVDQU (i*32)(SI), Y0    \
	VPSHUFD $0x4e, Y0, Y9     \
	VPAND   Y15, Y0, Y0       \
	VPXOR   Y9, Y0, Y0        \
	VMOVDQU Y0, (i*32)(R9)

#define VWHITEN(i, y) \
	VPXOR (i*32)(R9), Y8, y

#define VROUND16(off) \
	VBROADCASTI128 off(R10), Y8 \
	VAESENC        Y8, Y0, Y0   \
	VAESENC        Y8, Y1, Y1   \
	VAESENC        Y8, Y2, Y2   \
	VAESENC        Y8, Y3, Y3   \
	VAESENC        Y8, Y4, Y4   \
	VAESENC        Y8, Y5, Y5   \
	VAESENC        Y8, Y6, Y6   \
	VAESENC        Y8, Y7, Y7

#define VLAST16 \
	VBROADCASTI128 160(R10), Y8 \
	VAESENCLAST    Y8, Y0, Y0   \
	VAESENCLAST    Y8, Y1, Y1   \
	VAESENCLAST    Y8, Y2, Y2   \
	VAESENCLAST    Y8, Y3, Y3   \
	VAESENCLAST    Y8, Y4, Y4   \
	VAESENCLAST    Y8, Y5, Y5   \
	VAESENCLAST    Y8, Y6, Y6   \
	VAESENCLAST    Y8, Y7, Y7

#define VFEED(i, y) \
	VPXOR (i*32)(R9), y, y

// ENC16 encrypts the 16 scratch blocks under the schedule at R10 and adds
// the MMO feed-forward: Y0…Y7 hold H(seed 2i), H(seed 2i+1).
#define ENC16 \
	VBROADCASTI128 (R10), Y8 \
	VWHITEN(0, Y0)           \
	VWHITEN(1, Y1)           \
	VWHITEN(2, Y2)           \
	VWHITEN(3, Y3)           \
	VWHITEN(4, Y4)           \
	VWHITEN(5, Y5)           \
	VWHITEN(6, Y6)           \
	VWHITEN(7, Y7)           \
	VROUND16(16)             \
	VROUND16(32)             \
	VROUND16(48)             \
	VROUND16(64)             \
	VROUND16(80)             \
	VROUND16(96)             \
	VROUND16(112)            \
	VROUND16(128)            \
	VROUND16(144)            \
	VLAST16                  \
	VFEED(0, Y0)             \
	VFEED(1, Y1)             \
	VFEED(2, Y2)             \
	VFEED(3, Y3)             \
	VFEED(4, Y4)             \
	VFEED(5, Y5)             \
	VFEED(6, Y6)             \
	VFEED(7, Y7)

#define VSIGMA16 \
	VSIGMA_TO_SCRATCH(0) \
	VSIGMA_TO_SCRATCH(1) \
	VSIGMA_TO_SCRATCH(2) \
	VSIGMA_TO_SCRATCH(3) \
	VSIGMA_TO_SCRATCH(4) \
	VSIGMA_TO_SCRATCH(5) \
	VSIGMA_TO_SCRATCH(6) \
	VSIGMA_TO_SCRATCH(7) \
	ADDQ $256, SI

#define STORE16 \
	VMOVDQU Y0, 0(R11)   \
	VMOVDQU Y1, 32(R11)  \
	VMOVDQU Y2, 64(R11)  \
	VMOVDQU Y3, 96(R11)  \
	VMOVDQU Y4, 128(R11) \
	VMOVDQU Y5, 160(R11) \
	VMOVDQU Y6, 192(R11) \
	VMOVDQU Y7, 224(R11)

// SUM16 adds the 16 blocks in Y0…Y7 to the block at R11.
#define SUM16 \
	VPADDQ      Y1, Y0, Y0 \
	VPADDQ      Y3, Y2, Y2 \
	VPADDQ      Y5, Y4, Y4 \
	VPADDQ      Y7, Y6, Y6 \
	VPADDQ      Y2, Y0, Y0 \
	VPADDQ      Y6, Y4, Y4 \
	VPADDQ      Y4, Y0, Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDQ      X1, X0, X0 \
	VPADDQ      (R11), X0, X0 \
	VMOVDQU     X0, (R11)

// func prgNodeVAES(a *prgNodeArgs)
//
// prgNodeAsm for a.n seeds, a multiple of 16, on VAES over YMM registers;
// a.scratch must hold 16 blocks.
TEXT ·prgNodeVAES(SB), NOSPLIT, $0-8
	PRG_ARGS
	VBROADCASTI128 hiMask<>(SB), Y15
	GROUPS(group16, 16, 256, VSIGMA16, ENC16, STORE16, SUM16, left16, right16, values16, svalues16, done16, vdone)

vdone:
	VZEROUPPER
	RET

// func x86Features() (avx2, vaes bool)
//
// AVX2 needs CPUID.1:ECX OSXSAVE (bit 27) and AVX (28), the OS saving
// XMM and YMM state (XCR0 bits 1 and 2) and CPUID.(7,0):EBX AVX2 (bit
// 5); VAES on YMM registers needs AVX2 and CPUID.(7,0):ECX VAES (bit 9).
TEXT ·x86Features(SB), NOSPLIT, $0-2
	MOVB  $0, avx2+0(FP)
	MOVB  $0, vaes+1(FP)
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	ANDL  $0x18000000, CX
	CMPL  CX, $0x18000000
	JNE   nofeatures
	XORL  CX, CX
	XGETBV
	ANDL  $6, AX
	CMPL  AX, $6
	JNE   nofeatures
	MOVL  $7, AX
	XORL  CX, CX
	CPUID
	BTL   $5, BX
	JCC   nofeatures
	MOVB  $1, avx2+0(FP)
	BTL   $9, CX
	JCC   nofeatures
	MOVB  $1, vaes+1(FP)

nofeatures:
	RET

// VAES on ZMM registers: ZSIGMA32 and ENC32 (vaes512_amd64.h).

#define STORE32 \
	VMOVDQU64 Z0, 0(R11)   \
	VMOVDQU64 Z1, 64(R11)  \
	VMOVDQU64 Z2, 128(R11) \
	VMOVDQU64 Z3, 192(R11) \
	VMOVDQU64 Z4, 256(R11) \
	VMOVDQU64 Z5, 320(R11) \
	VMOVDQU64 Z6, 384(R11) \
	VMOVDQU64 Z7, 448(R11)

// SUM32 adds the 32 blocks in Z0…Z7 to the block at R11.
#define SUM32 \
	VPADDQ        Z1, Z0, Z0   \
	VPADDQ        Z3, Z2, Z2   \
	VPADDQ        Z5, Z4, Z4   \
	VPADDQ        Z7, Z6, Z6   \
	VPADDQ        Z2, Z0, Z0   \
	VPADDQ        Z6, Z4, Z4   \
	VPADDQ        Z4, Z0, Z0   \
	VEXTRACTI64X4 $1, Z0, Y1   \
	VPADDQ        Y1, Y0, Y0   \
	VEXTRACTI128  $1, Y0, X1   \
	VPADDQ        X1, X0, X0   \
	VPADDQ        (R11), X0, X0 \
	VMOVDQU       X0, (R11)

// func prgNodeVAES512(a *prgNodeArgs)
//
// prgNodeAsm for a.n seeds, a multiple of 32, on VAES over ZMM registers
// (AVX-512); a.scratch is not used.
TEXT ·prgNodeVAES512(SB), NOSPLIT, $0-8
	PRG_ARGS
	VBROADCASTI32X4 hiMask<>(SB), Z15
	GROUPS(group32, 32, 512, ZSIGMA32, ENC32, STORE32, SUM32, left32, right32, values32, svalues32, done32, zdone)

zdone:
	VZEROUPPER
	RET
