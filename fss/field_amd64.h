// Constants and macros of the field walker's vector loops (walk_amd64.s
// and fwide_amd64.s), each file its own copy: F_p's modulus
// p = 2^64 − 2^32 + 1 and 2^32 − 1 ≡ 2^64, broadcast from 64 bits, and the
// index vectors that gather four components of two keys.
DATA low32<>+0(SB)/8, $0x00000000ffffffff
GLOBL low32<>(SB), RODATA|NOPTR, $8
DATA modulus<>+0(SB)/8, $0xffffffff00000001
GLOBL modulus<>(SB), RODATA|NOPTR, $8

// pairLo and pairHi index, over a ZMM register A of four keys'
// components (0, 1) and one B of the same keys' components (2, 3), the
// four components of the first two keys (pairLo) and of the last two
// (pairHi), each key's in 32 bytes.
DATA pairLo<>+0(SB)/8, $0
DATA pairLo<>+8(SB)/8, $1
DATA pairLo<>+16(SB)/8, $8
DATA pairLo<>+24(SB)/8, $9
DATA pairLo<>+32(SB)/8, $2
DATA pairLo<>+40(SB)/8, $3
DATA pairLo<>+48(SB)/8, $10
DATA pairLo<>+56(SB)/8, $11
GLOBL pairLo<>(SB), RODATA|NOPTR, $64
DATA pairHi<>+0(SB)/8, $4
DATA pairHi<>+8(SB)/8, $5
DATA pairHi<>+16(SB)/8, $12
DATA pairHi<>+24(SB)/8, $13
DATA pairHi<>+32(SB)/8, $6
DATA pairHi<>+40(SB)/8, $7
DATA pairHi<>+48(SB)/8, $14
DATA pairHi<>+56(SB)/8, $15
GLOBL pairHi<>(SB), RODATA|NOPTR, $64

// ADDP512(x, a): a = addP(a, x): a + x, plus 2^32 − 1 (Z14) in the lanes
// where the addition carried (a + x <u x); clobbers K2.
#define ADDP512(x, a) \
	VPADDQ  x, a, a      \
	VPCMPUQ $1, x, a, K2 \
	VPADDQ  Z14, a, K2, a

// CANON512(z): z = canonical(z), negated mod p in the lanes of K6 (party
// 1) that are not 0; Z12 = p; clobbers K3, K5.
#define CANON512(z) \
	VPCMPUQ  $5, Z12, z, K3 \
	VPSUBQ   Z12, z, K3, z  \
	VPTESTMQ z, z, K6, K5   \
	VPSUBQ   z, Z12, K5, z
