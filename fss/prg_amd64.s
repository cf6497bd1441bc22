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

#define LOAD(i, x) \
	MOVOU (i*16)(SI), x \
	SIGMA(x, X9)        \
	PXOR  X8, x

#define FINISH(i, x) \
	MOVOU (i*16)(SI), X10 \
	SIGMA(X10, X11)       \
	PXOR  X10, x          \
	MOVOU x, (i*16)(DI)

#define ROUND8(off) \
	MOVOU off(AX), X8 \
	AESENC X8, X0 \
	AESENC X8, X1 \
	AESENC X8, X2 \
	AESENC X8, X3 \
	AESENC X8, X4 \
	AESENC X8, X5 \
	AESENC X8, X6 \
	AESENC X8, X7

// func mmoBlocksAsm(rk *[176]byte, dst, src *uint64, n int)
// dst[i] = AES_rk(σ(src[i])) ⊕ σ(src[i]) for n blocks, eight in flight.
TEXT ·mmoBlocksAsm(SB), NOSPLIT, $0-32
	MOVQ rk+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVOU hiMask<>(SB), X15

loop8:
	CMPQ CX, $8
	JB   loop1
	MOVOU (AX), X8
	LOAD(0, X0)
	LOAD(1, X1)
	LOAD(2, X2)
	LOAD(3, X3)
	LOAD(4, X4)
	LOAD(5, X5)
	LOAD(6, X6)
	LOAD(7, X7)
	ROUND8(16)
	ROUND8(32)
	ROUND8(48)
	ROUND8(64)
	ROUND8(80)
	ROUND8(96)
	ROUND8(112)
	ROUND8(128)
	ROUND8(144)
	MOVOU 160(AX), X8
	AESENCLAST X8, X0
	AESENCLAST X8, X1
	AESENCLAST X8, X2
	AESENCLAST X8, X3
	AESENCLAST X8, X4
	AESENCLAST X8, X5
	AESENCLAST X8, X6
	AESENCLAST X8, X7
	FINISH(0, X0)
	FINISH(1, X1)
	FINISH(2, X2)
	FINISH(3, X3)
	FINISH(4, X4)
	FINISH(5, X5)
	FINISH(6, X6)
	FINISH(7, X7)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $8, CX
	JMP  loop8

loop1:
	TESTQ CX, CX
	JZ    done
	MOVOU (AX), X8
	LOAD(0, X0)
	MOVOU 16(AX), X8
	AESENC X8, X0
	MOVOU 32(AX), X8
	AESENC X8, X0
	MOVOU 48(AX), X8
	AESENC X8, X0
	MOVOU 64(AX), X8
	AESENC X8, X0
	MOVOU 80(AX), X8
	AESENC X8, X0
	MOVOU 96(AX), X8
	AESENC X8, X0
	MOVOU 112(AX), X8
	AESENC X8, X0
	MOVOU 128(AX), X8
	AESENC X8, X0
	MOVOU 144(AX), X8
	AESENC X8, X0
	MOVOU 160(AX), X8
	AESENCLAST X8, X0
	FINISH(0, X0)
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JMP  loop1

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
