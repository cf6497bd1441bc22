// Constants of the field walker's vector loops (walk_amd64.s and
// fwide_amd64.s), each file its own copy: F_p's modulus p = 2^64 − 2^32 + 1
// and 2^32 − 1 ≡ 2^64, broadcast from 64 bits, and the index vectors that
// gather four components of two keys.
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
