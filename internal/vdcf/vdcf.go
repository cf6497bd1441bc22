package vdcf

// The scheme: its version, sizes and layout (Scheme), shared by the
// party's encoding (encode.go), the servers' checks (check.go) and the
// challenge derivation (challenge.go).

import (
	"fmt"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Version names the report format and separates the servers' random
// coefficients of this scheme, and the expansion of the parties' seeds,
// from every other use of their key and seeds: reports and messages of
// another version fail verification.
const Version = "fedecdf/vdcf v6"

// NonceSize and KeySize are the sizes in bytes of a report's nonce and of
// the verification key the two servers share; SeedSize is the size of the
// seed in each server's share, from which it expands its shares of the
// correlated randomness (package doc, "Seeds").
const (
	NonceSize = 16
	KeySize   = 32
	SeedSize  = 16
)

// MAC is the index of the third component of a report's DCF payload,
// κ₁ + κ₂·y: the MAC that binds the count and label shares to the party's
// secret κ in the first check (package doc); the second check's MAC,
// with its own κ, is the last component (Scheme.Components − 1).
// payload.Count and payload.Label are the first two, at their payload
// indices; the not-label prefixes are Count − Label, formed by the
// servers.
const MAC = 2

// checks is the number of independent checks of a report, each with its
// own challenge, correlated randomness and MAC (package doc,
// "Soundness", "Tensor challenges"): two in F_p give (5/(p − 1))² <
// 2^-123.35 per report.
const checks = 2

// Probability is the index of the fourth component of a scheme that
// carries the probability (NewWithProbability): the party's fixed-point
// probability p ∈ [0, MaxProbability], payload.Probability's index too.
const Probability = 3

// MaxProbability is the largest probability a report carries:
// payload.ProbabilityScale, the fixed point of probability 1 (a party
// encodes round(p·2^32) ∈ [0, 2^32]).
const MaxProbability = payload.ProbabilityScale

// probBits is the number of bits of a probability's decomposition:
// p = Σ_{i<33} 2^i·b_i, with b_32 = 1 only for p = 2^32.
const probBits = 33

// The party's correlated randomness of one check, per server: additive
// shares of a₁, a₁², a₂, a₂(a₁ − a₂), κ₁, κ₂, κ₁a₁ + κ₂a₂. A report
// carries one such block per check, the second after the first.
const (
	corrA1 = iota
	corrC1
	corrA2
	corrC2
	corrK1
	corrK2
	corrMu
	corrLen
)

// The probability's correlated randomness, after the above in each block
// of a scheme that carries it: shares of the bits b_i, their masks a'_i, MAC keys κ'_i
// and MACs κ'_i·b_i (probBits each), then Σ a'_i², a_p, a₁a_p, a'_32·a_p,
// κ_p and κ_p·p.
const (
	corrBits  = corrLen
	corrMasks = corrBits + probBits
	corrKeys  = corrMasks + probBits
	corrMacs  = corrKeys + probBits
	corrSq    = corrMacs + probBits
	corrAP    = corrSq + 1
	corrCP    = corrAP + 1
	corrCT    = corrCP + 1
	corrKP    = corrCT + 1
	corrMP    = corrKP + 1
	corrLenP  = corrMP + 1
)

// Message2Size is the size of the second message each server sends per
// report: its shares of the two checks' values z.
const Message2Size = 8 * checks

// Scheme is the verifiable DCF over a grid of bins.
type Scheme struct {
	dom  fss.PrefixDomain
	bins int
	prob bool // reports carry the probability
	// explicit[id] lists the determined correlated values whose share
	// server id receives explicitly (not expanded from its seed).
	explicit [2][]int
}

// New returns the scheme for a grid of bins ≥ 1 bins whose reports carry
// a record's count and label.
func New(bins int) (*Scheme, error) {
	dom, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return nil, fmt.Errorf("vdcf: %w", err)
	}
	s := &Scheme{dom: dom, bins: bins}
	s.split()
	return s, nil
}

// NewWithProbability is New for reports that also carry the record's
// fixed-point probability in [0, MaxProbability], verified in range and
// at the record's bin (package doc, "Probability").
func NewWithProbability(bins int) (*Scheme, error) {
	s, err := New(bins)
	if err != nil {
		return nil, err
	}
	s.prob = true
	s.split()
	return s, nil
}

// split assigns each determined correlated value's explicit share to one
// server: in layout order, alternately the helper and the leader, so that
// the two uploads differ by at most one field element.
func (s *Scheme) split() {
	s.explicit = [2][]int{}
	for k, i := range s.determined() {
		id := 1 - k%2
		s.explicit[id] = append(s.explicit[id], i)
	}
}

// determined lists, in layout order, the correlated values that the
// record and the free values fix: in each check's block the triples'
// products, the MACs and μ, and the probability's bits. The others (the
// masks a and MAC keys κ) are free.
func (s *Scheme) determined() []int {
	var d []int
	for k := range checks {
		base := k * s.blockLen()
		for _, i := range s.determinedInBlock() {
			d = append(d, base+i)
		}
	}
	return d
}

// determinedInBlock lists the determined values of one check's block.
func (s *Scheme) determinedInBlock() []int {
	d := []int{corrC1, corrC2, corrMu}
	if !s.prob {
		return d
	}
	for _, base := range []int{corrBits, corrMacs} {
		for i := range probBits {
			d = append(d, base+i)
		}
	}
	return append(d, corrSq, corrCP, corrCT, corrMP)
}

// Bins is the number of bins of the grid.
func (s *Scheme) Bins() int { return s.bins }

// HasProbability reports whether the scheme's reports carry the
// probability.
func (s *Scheme) HasProbability() bool { return s.prob }

// Components is m, the number of field components of a report's DCF
// payload and of each prefix of its vector (Server.PrepareAll): Count,
// Label, MAC, Probability if the scheme carries it, and the second
// check's MAC.
func (s *Scheme) Components() int {
	if s.prob {
		return 5
	}
	return 4
}

// macOf is the component of check k's MAC: MAC for the first, the last
// component for the second.
func (s *Scheme) macOf(k int) int {
	if k == 0 {
		return MAC
	}
	return s.Components() - 1
}

// blockLen is the number of field elements of one check's block of a
// share's correlated randomness.
func (s *Scheme) blockLen() int {
	if s.prob {
		return corrLenP
	}
	return corrLen
}

// corrLen is the number of field elements of a share's correlated
// randomness: one block per check.
func (s *Scheme) corrLen() int { return checks * s.blockLen() }

// openings is the number of masked openings each server sends per check:
// d₁, d₂, and with the probability d_p and one per bit.
func (s *Scheme) openings() int {
	if s.prob {
		return 3 + probBits
	}
	return 2
}

// Message1Size is the size of the first message each server sends per
// report: its shares of the masked openings of both checks.
func (s *Scheme) Message1Size() int { return 8 * checks * s.openings() }

// ShareSize is the length in bytes of server id's share of a report (0
// leader, 1 helper): its field DCF key, its seed and its explicit shares of
// the determined correlated values.
func (s *Scheme) ShareSize(id int) int {
	return s.keySize() + SeedSize + 8*len(s.explicit[id])
}

// keySize is the length in bytes of a share's field DCF key, its prefix.
func (s *Scheme) keySize() int { return fss.EncodedSize(s.dom.Bits(), s.Components()) }

// Lift maps a signed integer into the field: x mod p (a server's noise,
// added to its share of a prefix sum).
func Lift(x int64) fss.Fp {
	if x >= 0 {
		return fss.Fp(uint64(x) % fss.Modulus)
	}
	return fss.Fp(uint64(-x) % fss.Modulus).Neg() // −MinInt64 wraps to 2^63, as wanted
}

// Lower maps a field element back to a signed integer, the
// representative of x in (−p/2, p/2), as two's complement mod 2^64. It is
// the inverse of Lift, and of sums of Lifts, while the true value v has
// |v| < p/2 ≈ 2^63: a count of at most 2^32 plus two noises each below
// 2^61 in magnitude.
func Lower(x fss.Fp) uint64 {
	if uint64(x) <= fss.Modulus/2 {
		return uint64(x)
	}
	return -uint64(x.Neg())
}
