// The field's constants, limb arithmetic, first differences, the summed
// components' stores and the lane sums' loads and stores, shared by the package's AVX-512 IFMA kernels (sketch_amd64.s,
// tensor5_amd64.s; each includes its own file-local copy of the
// constants). Z31 holds 2^52 − 1 in every lane.

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

// DIFF(cur, prev, d): d = the first differences P(j) − P(j − 1) mod p
// of the eight prefixes of one component in cur, P(j − 1) of the first
// from the last lane of prev, which then takes cur's values; a
// difference that borrows (P(j) below P(j − 1), both below p) gets p
// back. K1 is clobbered.
#define DIFF(cur, prev, d) \
	VALIGNQ     $7, prev, cur, d        \
	VPCMPUQ     $1, d, cur, K1          \
	VPSUBQ      d, cur, d               \
	VPADDQ.BCST modulus<>(SB), d, K1, d \
	VMOVDQA64   cur, prev

// KEEP(x, at): store x (eight prefixes of one component) at `at`, then
// the next eight; NOKEEP: nothing, for a kernel's `keep` argument.
#define KEEP(x, at) \
	VMOVDQU64 x, (at) \
	ADDQ      $64, at

#define NOKEEP

// LOAD_ACC loads the accumulators Z0–Z11 from DX, 64 bytes each;
// STORE_ACC stores them there.
#define LOAD_ACC \
	VMOVDQU64 0(DX), Z0 \
	VMOVDQU64 64(DX), Z1 \
	VMOVDQU64 128(DX), Z2 \
	VMOVDQU64 192(DX), Z3 \
	VMOVDQU64 256(DX), Z4 \
	VMOVDQU64 320(DX), Z5 \
	VMOVDQU64 384(DX), Z6 \
	VMOVDQU64 448(DX), Z7 \
	VMOVDQU64 512(DX), Z8 \
	VMOVDQU64 576(DX), Z9 \
	VMOVDQU64 640(DX), Z10 \
	VMOVDQU64 704(DX), Z11

#define STORE_ACC \
	VMOVDQU64 Z0, 0(DX) \
	VMOVDQU64 Z1, 64(DX) \
	VMOVDQU64 Z2, 128(DX) \
	VMOVDQU64 Z3, 192(DX) \
	VMOVDQU64 Z4, 256(DX) \
	VMOVDQU64 Z5, 320(DX) \
	VMOVDQU64 Z6, 384(DX) \
	VMOVDQU64 Z7, 448(DX) \
	VMOVDQU64 Z8, 512(DX) \
	VMOVDQU64 Z9, 576(DX) \
	VMOVDQU64 Z10, 640(DX) \
	VMOVDQU64 Z11, 704(DX)
