package vdcf

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// TestProbabilityOutOfRangeRefused checks the party side: a probability
// above the fixed point of 1, or a scheme without the component, is an
// error, not a report.
func TestProbabilityOutOfRangeRefused(t *testing.T) {
	f, plain := newProbFixture(t, 4, 2), newFixture(t, 4, 2)
	if _, err := f.s.EncodeProbability(1, true, MaxProbability+1, f.rnd); err == nil {
		t.Error("probability 2^32 + 1 encoded")
	}
	if _, err := f.s.Encode(1, true, f.rnd); err == nil {
		t.Error("Encode without a probability on a scheme that carries it")
	}
	if _, err := plain.s.EncodeProbability(1, true, 5, f.rnd); err == nil {
		t.Error("EncodeProbability on a scheme without the component")
	}
}

// TestInvalidProbabilityReportsRejected checks the probability's invalid
// reports beyond the forgeries (TestForgeriesRejected): the probability's
// prefix vector of another report (at another bin), the MAC key of the
// probability not the one the MAC was made with, and every count and
// label forgery of the scheme without the probability.
func TestInvalidProbabilityReportsRejected(t *testing.T) {
	f := newProbFixture(t, 16, 3)
	kinds := []invalid{
		{"probability at another bin", "proof", mixedVectors(Probability)},
		{"probability and count at another bin than label", "proof", mixedVectors(Probability, payload.Count)},
		{"payload 2", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			r, err := f.s.encode(f.nonce(), plain{bin: f.r.IntN(f.s.bins), beta: []fss.Fp{2, 0, 7}, bits: bitsOf(7)}, f.rnd)
			if err != nil {
				t.Fatal(err)
			}
			return r, attack{}
		}},
		{"probability 2^33 - 1", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			r, err := f.s.encode(f.nonce(), plain{bin: f.r.IntN(f.s.bins), beta: []fss.Fp{1, 1, 1<<33 - 1}, bits: bitsOf(1<<33 - 1)}, f.rnd)
			if err != nil {
				t.Fatal(err)
			}
			return r, attack{}
		}},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			for range reportCount(40) {
				r, a := kind.make(t, f)
				for id, err := range f.decide(t, r.Nonce, r.Shares, a) {
					if !errors.Is(err, verify.ErrProof) {
						t.Fatalf("server %d: %v, want ErrProof", id, err)
					}
				}
			}
		})
	}
}

// TestCorruptLeaderCannotReadAProbabilityBit is the MAC's attack on the
// new openings: a leader shifts its opening of x'_i = s_i·b_i by 1, so
// that without the MAC z = ρ₄(2s_i·b_i + 1) tells it the bit b_i of the
// record's probability. With the MAC no guess matches; without it (the
// MAC term taken out), the true bit always does, so the test has power.
func TestCorruptLeaderCannotReadAProbabilityBit(t *testing.T) {
	f := newProbFixture(t, 16, 4)
	for k := range 60 {
		i := k % (probBits - 1) // b_32 also enters the range term: the others
		shift := func(id int, msg []byte) []byte {
			if id == 0 {
				off := 8 * (3 + i)
				d := fss.Fp(binary.LittleEndian.Uint64(msg[off:]))
				binary.LittleEndian.PutUint64(msg[off:], uint64(d.Add(1)))
			}
			return msg
		}
		prob := f.r.Uint64N(MaxProbability + 1)
		first, second, pend := f.exchangePending(t, f.encodeProb(t, f.r.IntN(16), true, prob), shift)
		z, d := leaderView(first, second, pend)
		noMAC := z.Sub(pend[0].chk[0].coef.rho[rhoMAC].Mul(pend[0].macShare(&pend[0].chk[0], d).Add(pend[1].macShare(&pend[1].chk[0], d))))
		guess := func(v fss.Fp) (hits []uint64) {
			for _, b := range []uint64{0, 1} {
				if pend[0].chk[0].coef.rho[rhoBits].Mul(fss.Fp(2*b).Mul(pend[0].chk[0].coef.s[i]).Add(1)) == v {
					hits = append(hits, b)
				}
			}
			return hits
		}
		if hits := guess(z); len(hits) > 0 {
			t.Fatalf("report %d: the leader's guesses %v of bit %d match the check value", k, hits, i)
		}
		if hits := guess(noMAC); len(hits) != 1 || hits[0] != prob>>i&1 {
			t.Fatalf("report %d: without the MAC the guesses %v of bit %d, want exactly %d: the test has no power", k, hits, i, prob>>i&1)
		}
	}
}
