package verify

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"
	"github.com/fedecdf/fedecdf/internal/stattest"
)

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

// TestVerifierMessagesLookUniform is the zero-knowledge smoke test: for two
// different records, the verifier share each server receives from the
// other, and the wire checks of the combined verifier that both learn, are
// uniform (χ² on the low 4 bits of each field element).
// Six statistics are compared with stattest.NibbleLimit: a correct
// implementation fails with probability < 1.6·10⁻⁶, and the seeds are
// fixed, so the test is deterministic.
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
				if x := stattest.NibbleChiSquare(seen[k]); x > stattest.NibbleLimit {
					t.Errorf("χ² = %.1f > %d: %v", x, stattest.NibbleLimit, seen[k])
				}
			})
		}
	}
}
