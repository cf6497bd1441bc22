package fss

// maxComponents is the largest number m of 64-bit payload components a
// key may carry.
const maxComponents = 64

// maxBits is the largest domain size exponent: inputs are uint64.
const maxBits = 64

// Key is one party's share of a distributed comparison function
// f_{α,β}(x) = β·1[x < α] on [0, 2^Bits()) with β ∈ (Z_{2^64})^Components().
// It carries the initial seed s^(0), the correction words CW^(1…n) and the
// final correction word CW^(n+1) of BCG+21 Fig. 3.
type Key struct {
	party int
	nbits int
	m     int
	seed  block
	// cw holds, for each level d = 0…n−1 (level d+1 of the paper), the
	// seed correction sCW (two words, least significant bit 0) followed
	// by the m words of the value correction VCW: stride 2+m.
	cw []uint64
	// tcw[side] has bit d set when the control-bit correction tCW of
	// level d+1 on that side (0 left, 1 right) is 1.
	tcw [2]uint64
	// final is CW^(n+1), m words.
	final []uint64
}

// Party returns the party bit b ∈ {0, 1} of the key: the server that holds
// it. Eval(k0, x) + Eval(k1, x) = f_{α,β}(x).
func (k *Key) Party() int { return k.party }

// Bits returns n: the key evaluates inputs x ∈ [0, 2^n).
func (k *Key) Bits() int { return k.nbits }

// Components returns m, the number of 64-bit components of β and of every
// output.
func (k *Key) Components() int { return k.m }

// stride is the number of words of cw per level.
func (k *Key) stride() int { return 2 + k.m }

// inDomain reports whether x < 2^nbits.
func inDomain(x uint64, nbits int) bool {
	return nbits >= 64 || x>>uint(nbits) == 0
}

// pathBit returns bit d+1 of x counted from the most significant of its
// nbits bits: the branch taken from level d to level d+1.
func pathBit(x uint64, nbits, d int) uint64 {
	return (x >> uint(nbits-1-d)) & 1
}
