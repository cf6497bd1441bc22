package verify

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// chi2Limit15 is the χ² quantile with 15 degrees of freedom exceeded with
// probability 2.5·10⁻⁷ (numerical integration of the density); with six
// statistics below a correct implementation fails with probability
// < 1.6·10⁻⁶, and the seeds are fixed, so the test is deterministic.
const chi2Limit15 = 60

// nibbles counts the low 4 bits of each element of v into h.
func nibbles(t *testing.T, h *[16]int, v fp128.Vec) {
	t.Helper()
	for i := range v {
		b, err := v[i].MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		h[b[0]&0xf]++
	}
}

func chi2Uniform(h [16]int) float64 {
	obs, exp := make([]float64, 16), make([]float64, 16)
	for i, c := range h {
		obs[i] = float64(c)
	}
	total := floats.Sum(obs)
	floats.AddConst(total/16, exp)
	return stat.ChiSquare(obs, exp)
}

// TestVerifierMessagesLookUniform is the zero-knowledge smoke test: for two
// different records, the verifier share each server receives from the
// other, and the wire checks of the combined verifier that both learn, are
// uniform (χ² on the low 4 bits of each field element).
func TestVerifierMessagesLookUniform(t *testing.T) {
	const bins, n = 16, 600
	f := newFixture(t, bins)
	params := f.s.h.Params()
	vlen := int(params.VerifierLength())
	for _, rec := range []record{{0, false}, {bins - 1, true}} {
		rnd := rand.NewChaCha8([32]byte{byte(rec.bin), 7})
		var seen [3][16]int // received by the leader, by the helper, combined wire checks
		for range n {
			r, err := f.s.Encode(rec.bin, rec.label, rnd)
			if err != nil {
				t.Fatal(err)
			}
			var v [2]fp128.Vec
			for i, srv := range []*Server{f.leader, f.helper} {
				_, msg, err := srv.Prepare(r.Nonce, r.Public, r.Shares[i])
				if err != nil {
					t.Fatal(err)
				}
				v[i] = make(fp128.Vec, vlen)
				if err := v[i].UnmarshalBinary(msg[:vlen*int(fp128.Size)]); err != nil {
					t.Fatal(err)
				}
			}
			nibbles(t, &seen[0], v[1])
			nibbles(t, &seen[1], v[0])
			sum := make(fp128.Vec, vlen)
			copy(sum, v[0])
			sum.AddAssign(v[1])
			if !sum[0].IsZero() {
				t.Fatal("honest report: circuit output is not zero")
			}
			nibbles(t, &seen[2], sum[1:vlen-1])
		}
		for k, name := range []string{"received by leader", "received by helper", "combined wire checks"} {
			t.Run(fmt.Sprintf("bin=%d label=%v/%s", rec.bin, rec.label, name), func(t *testing.T) {
				if x := chi2Uniform(seen[k]); x > chi2Limit15 {
					t.Errorf("χ² = %.1f > %d: %v", x, chi2Limit15, seen[k])
				}
			})
		}
	}
}
