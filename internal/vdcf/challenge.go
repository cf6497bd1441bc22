package vdcf

// Challenge derivation: the pseudorandom streams both sides draw — a
// party's seed expanded (expand), and the servers' challenge vector and
// per-report coefficients derived from their shared key.

import (
	"crypto/sha256"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/fss"
)

// expand is server id's expansion of its seed under nonce into n field
// elements: ChaCha8 keyed with SHA-256(Version ‖ 1 ‖ id ‖ seed ‖ nonce),
// 64-bit words rejection-sampled into F_p (package doc, "Seeds").
func expand(id int, seed [SeedSize]byte, nonce [NonceSize]byte, n int) []fss.Fp {
	h := sha256.New()
	h.Write([]byte(Version))
	h.Write([]byte{1, byte(id)})
	h.Write(seed[:])
	h.Write(nonce[:])
	var key [32]byte
	h.Sum(key[:0])
	st := rand.NewChaCha8(key)
	out := make([]fss.Fp, n)
	for i := range out {
		out[i] = next(st)
	}
	return out
}

// Indices of the servers' combination coefficients ρ₁ … ρ₆ (package doc).
const (
	rhoLabel = iota // ρ₁: the label is a bit at the bin
	rhoTotal        // ρ₂: the total count is 1
	rhoMAC          // ρ₃: the MAC
	rhoBits         // ρ₄: the probability's bits are bits
	rhoSupp         // ρ₅: the probability is at the bin
	rhoTop          // ρ₆: b_32 = 1 only for p = 2^32
	rhoLen
)

// coefficients are the servers' combination coefficients of one report,
// ρ₁ … ρ₆ (nonzero), and with the probability the bits' challenges s_i.
type coefficients struct {
	rho [rhoLen]fss.Fp
	s   []fss.Fp
}

// Domain-separation bytes of the two challenge streams drawn from the
// servers' key: the per-key challenge vector r and a report's
// coefficients (1 labels the expansion of a party's seed, expand).
const (
	streamReport = 0
	streamVector = 2
)

// stream is ChaCha8 seeded with SHA-256(Version ‖ label ‖ key ‖ nonce),
// nonce empty for the challenge vector.
func stream(label byte, key [KeySize]byte, nonce []byte) *rand.ChaCha8 {
	h := sha256.New()
	h.Write([]byte(Version))
	h.Write([]byte{label})
	h.Write(key[:])
	h.Write(nonce)
	var seed [32]byte
	h.Sum(seed[:0])
	return rand.NewChaCha8(seed)
}

// challengeVector derives the challenge vector r ∈ F_p^bins of every
// report from the servers' key alone: r_0, …, r_{bins−1} from
// stream(streamVector, key), 64-bit words rejection-sampled into F_p.
func challengeVector(key [KeySize]byte, bins int) []fss.Fp {
	st := stream(streamVector, key, nil)
	r := make([]fss.Fp, bins)
	for j := range r {
		r[j] = next(st)
	}
	return r
}

// challenge derives the coefficients of the report with the nonce from
// the servers' key: from stream(streamReport, key, nonce), 64-bit words
// rejection-sampled into F_p, ρ₁ … ρ₆ (each redrawn while zero), then
// s_0 … s_32 if the scheme carries the probability.
func (v *Server) challenge(nonce [NonceSize]byte) coefficients {
	st := stream(streamReport, v.key, nonce[:])
	var c coefficients
	for i := range c.rho {
		for c.rho[i] == 0 {
			c.rho[i] = next(st)
		}
	}
	if v.s.prob {
		c.s = make([]fss.Fp, probBits)
		for i := range c.s {
			c.s[i] = next(st)
		}
	}
	return c
}

// next draws a uniform field element from the stream.
func next(st *rand.ChaCha8) fss.Fp {
	for {
		if x := fss.Fp(st.Uint64()); x.Valid() {
			return x
		}
	}
}
