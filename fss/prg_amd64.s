//go:build amd64 && !purego

#include "textflag.h"

// hiMask selects the high 64-bit lane of an XMM register.
DATA hiMask<>+0(SB)/8, $0
DATA hiMask<>+8(SB)/8, $-1
GLOBL hiMask<>(SB), RODATA|NOPTR, $16

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

// VALUES(enc, sum, loop, skip): for each value key j, add the seeds'
// hashes to sums[j].
#define VALUES(enc, sum, loop, skip) \
	MOVQ  24(DX), R13 \
	TESTQ R13, R13    \
	JZ    skip        \
	MOVQ  16(DX), R10 \
	MOVQ  48(DX), R11 \
loop:                 \
	enc               \
	sum               \
	ADDQ  $176, R10   \
	ADDQ  $16, R11    \
	DECQ  R13         \
	JNZ   loop        \
skip:

// func prgNodeAsm(a *prgNodeArgs)
//
// For the n seeds at a.seeds: a.left[i] = H(leftKey, seed i) and
// a.right[i] = H(rightKey, seed i) when those keys are not nil, and
// a.sums[j] += Σ_i H(valueKeys[j], seed i) for j < a.values, where
// H(k, x) = AES_k(σ(x)) ⊕ σ(x). Eight seeds in flight, then one at a time.
TEXT ·prgNodeAsm(SB), NOSPLIT, $0-8
	MOVQ  a+0(FP), DX
	MOVQ  56(DX), SI // seeds
	MOVQ  64(DX), CX // seeds left
	MOVQ  72(DX), R9 // scratch
	XORQ  R8, R8     // byte offset of the current seeds' outputs
	MOVOU hiMask<>(SB), X15

group8:
	CMPQ CX, $8
	JB   tail
	SIGMA8
	SEEDS(ENC8, STORE8, 0, 32, left8)
	SEEDS(ENC8, STORE8, 8, 40, right8)
	VALUES(ENC8, SUM8, values8, done8)
	ADDQ $128, R8
	SUBQ $8, CX
	JMP  group8

tail:
	TESTQ CX, CX
	JZ    done
	SIGMA_TO_SCRATCH(0)
	ADDQ  $16, SI
	SEEDS(ENC1, STORE1, 0, 32, left1)
	SEEDS(ENC1, STORE1, 8, 40, right1)
	VALUES(ENC1, SUM1, values1, done1)
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
