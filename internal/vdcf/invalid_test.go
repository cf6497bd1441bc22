package vdcf

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/internal/verify"
)

// TestForgeriesRejected checks that both servers reject every forgery a
// simulated malicious party sends, for the reason Forgeries gives, with
// and without the probability.
func TestForgeriesRejected(t *testing.T) {
	for _, f := range []*fixture{newFixture(t, 16, 5), newProbFixture(t, 16, 5)} {
		for _, kind := range f.s.Forgeries() {
			t.Run(fmt.Sprintf("probability=%v/%s", f.s.prob, kind.Name), func(t *testing.T) {
				forgeriesRejected(t, f, kind)
			})
		}
	}
}

func forgeriesRejected(t *testing.T, f *fixture, kind verify.Kind[Forgery]) {
	for range reportCount(40) {
		var nonce [NonceSize]byte
		f.rnd.Read(nonce[:])
		r, err := f.s.Forge(kind.Kind, nonce, f.r.IntN(f.s.bins), f.r.IntN(2) == 1, f.rnd, f.r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Nonce != nonce {
			t.Fatalf("nonce %x, want %x", r.Nonce, nonce)
		}
		for id, err := range f.decide(t, r.Nonce, r.Shares, attack{}) {
			if !errors.Is(err, kind.Want) {
				t.Fatalf("server %d: %v, want %v", id, err, kind.Want)
			}
		}
	}
}
