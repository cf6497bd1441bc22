// The PRG's AES on ZMM registers (VAES with AVX-512), shared by the node
// PRG (prg_amd64.s) and the fused field walk (fwide_amd64.s): thirty-two
// seeds in flight as eight ZMM registers of four blocks each, every round
// key broadcast to the four lanes. The seeds' σ stay in Z16…Z23 (no
// scratch); Z15 = hiMask (0, all ones) in every 128-bit lane, Z8 round
// key, Z9 scratch.

// hiMask selects the high 64-bit lane of a 128-bit one.
DATA hiMask<>+0(SB)/8, $0
DATA hiMask<>+8(SB)/8, $-1
GLOBL hiMask<>(SB), RODATA|NOPTR, $16

// ZSIGMA(i, z): z = σ(seeds 4i … 4i+3 at SI).
#define ZSIGMA(i, z) \
	VMOVDQU64 (i*64)(SI), z \
	VPSHUFD   $0x4e, z, Z9  \
	VPANDQ    Z15, z, z     \
	VPXORQ    Z9, z, z

#define ZSIGMA32 \
	ZSIGMA(0, Z16) \
	ZSIGMA(1, Z17) \
	ZSIGMA(2, Z18) \
	ZSIGMA(3, Z19) \
	ZSIGMA(4, Z20) \
	ZSIGMA(5, Z21) \
	ZSIGMA(6, Z22) \
	ZSIGMA(7, Z23) \
	ADDQ $512, SI

#define ZROUND32(off) \
	VBROADCASTI32X4 off(R10), Z8 \
	VAESENC         Z8, Z0, Z0   \
	VAESENC         Z8, Z1, Z1   \
	VAESENC         Z8, Z2, Z2   \
	VAESENC         Z8, Z3, Z3   \
	VAESENC         Z8, Z4, Z4   \
	VAESENC         Z8, Z5, Z5   \
	VAESENC         Z8, Z6, Z6   \
	VAESENC         Z8, Z7, Z7

// ENC32 sets Z0…Z7 to H(σ in Z16…Z23) under the schedule at R10:
// AES(σ) ⊕ σ, four seeds per register.
#define ENC32 \
	VBROADCASTI32X4 (R10), Z8    \
	VPXORQ          Z8, Z16, Z0  \
	VPXORQ          Z8, Z17, Z1  \
	VPXORQ          Z8, Z18, Z2  \
	VPXORQ          Z8, Z19, Z3  \
	VPXORQ          Z8, Z20, Z4  \
	VPXORQ          Z8, Z21, Z5  \
	VPXORQ          Z8, Z22, Z6  \
	VPXORQ          Z8, Z23, Z7  \
	ZROUND32(16)                 \
	ZROUND32(32)                 \
	ZROUND32(48)                 \
	ZROUND32(64)                 \
	ZROUND32(80)                 \
	ZROUND32(96)                 \
	ZROUND32(112)                \
	ZROUND32(128)                \
	ZROUND32(144)                \
	VBROADCASTI32X4 160(R10), Z8 \
	VAESENCLAST     Z8, Z0, Z0   \
	VAESENCLAST     Z8, Z1, Z1   \
	VAESENCLAST     Z8, Z2, Z2   \
	VAESENCLAST     Z8, Z3, Z3   \
	VAESENCLAST     Z8, Z4, Z4   \
	VAESENCLAST     Z8, Z5, Z5   \
	VAESENCLAST     Z8, Z6, Z6   \
	VAESENCLAST     Z8, Z7, Z7   \
	VPXORQ          Z16, Z0, Z0  \
	VPXORQ          Z17, Z1, Z1  \
	VPXORQ          Z18, Z2, Z2  \
	VPXORQ          Z19, Z3, Z3  \
	VPXORQ          Z20, Z4, Z4  \
	VPXORQ          Z21, Z5, Z5  \
	VPXORQ          Z22, Z6, Z6  \
	VPXORQ          Z23, Z7, Z7
