// The field's constants and limb arithmetic, shared by the package's
// AVX-512 IFMA kernels (sketch_amd64.s, tensor5_amd64.s; each includes
// its own file-local copy of the constants). Z31 holds 2^52 − 1 in
// every lane.

// mask52 is 2^52 − 1, the low limb of a 64-bit word.
DATA mask52<>+0(SB)/8, $0x000fffffffffffff
GLOBL mask52<>(SB), RODATA|NOPTR, $8

// modulus is p = 2^64 − 2^32 + 1.
DATA modulus<>+0(SB)/8, $0xffffffff00000001
GLOBL modulus<>(SB), RODATA|NOPTR, $8

// twoTo32m1 is 2^32 − 1 ≡ 2^64 (mod p).
DATA twoTo32m1<>+0(SB)/8, $0xffffffff
GLOBL twoTo32m1<>(SB), RODATA|NOPTR, $8

// LIMBS(x, lo, hi): x = lo + 2^52·hi, lo < 2^52, hi < 2^12 (Z31: mask52);
// lo may be x.
#define LIMBS(x, lo, hi) \
	VPSRLQ $52, x, hi     \
	VPANDQ Z31, x, lo

// PRODUCT(a0, a1, b0, b1, z0, z1, z2) adds (a0 + 2^52·a1)(b0 + 2^52·b1)
// to z0 + 2^52·z1 + 2^104·z2, lane-wise: the low and high 52 bits of
// a0b0, a0b1 and a1b0, and a1b1 < 2^24, which has no high part.
#define PRODUCT(a0, a1, b0, b1, z0, z1, z2) \
	VPMADD52LUQ b0, a0, z0               \
	VPMADD52HUQ b0, a0, z1               \
	VPMADD52LUQ b1, a0, z1               \
	VPMADD52HUQ b1, a0, z2               \
	VPMADD52LUQ b0, a1, z1               \
	VPMADD52HUQ b0, a1, z2               \
	VPMADD52LUQ b1, a1, z2
