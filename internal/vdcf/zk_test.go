package vdcf

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
)

// chi2Limit15 is the χ² quantile with 15 degrees of freedom exceeded with
// probability 2.5·10⁻⁷ (as in internal/verify); with the twelve statistics
// below a correct implementation fails with probability < 3.1·10⁻⁶, and
// the seeds are fixed, so the test is deterministic.
const chi2Limit15 = 60

// nibbleCounts counts the low 4 bits of each field element of msg.
func nibbleCounts(h *[16]int, msg []byte) {
	for i := 0; i+8 <= len(msg); i += 8 {
		h[msg[i]&0xf]++
	}
}

func chi2Uniform(h [16]int) float64 {
	total := 0
	for _, c := range h {
		total += c
	}
	e := float64(total) / 16
	x := 0.0
	for _, c := range h {
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	return x
}

// TestMessagesLookUniform is the zero-knowledge smoke test: for two
// different records, every message a server receives (the other's masked
// openings and its share of z) is uniform, and so is the check value a
// corrupt leader learns when it shifts its opening (χ² on the low 4 bits
// of each field element). The χ² of the record's own prefix shares
// reconstructed (a one-hot vector) shows the test has power.
func TestMessagesLookUniform(t *testing.T) {
	const bins, n = 16, 600
	f := newFixture(t, bins, 6)
	shift := func(id int, msg []byte) []byte {
		if id == 0 {
			d := fss.Fp(binary.LittleEndian.Uint64(msg[8:]))
			binary.LittleEndian.PutUint64(msg[8:], uint64(d.Add(1)))
		}
		return msg
	}
	for _, rec := range []struct {
		bin   int
		label bool
	}{{0, false}, {bins - 1, true}} {
		var seen [4][16]int // received by the leader, by the helper, z under attack, plaintext
		for range n {
			r := f.encode(t, rec.bin, rec.label)
			first, second := f.exchange(t, r, nil)
			nibbleCounts(&seen[0], append(first[1], second[1]...))
			nibbleCounts(&seen[1], append(first[0], second[0]...))
			_, tampered := f.exchange(t, r, shift)
			z := fss.Fp(binary.LittleEndian.Uint64(tampered[0])).Add(fss.Fp(binary.LittleEndian.Uint64(tampered[1])))
			nibbleCounts(&seen[2], binary.LittleEndian.AppendUint64(nil, uint64(z)))
			vecs, err := VerifyPair(f.srv[0], f.srv[1], r)
			if err != nil {
				t.Fatal(err)
			}
			nibbleCounts(&seen[3], binary.LittleEndian.AppendUint64(nil, uint64(vecs[0][0].Add(vecs[1][0]))))
		}
		for k, name := range []string{"received by leader", "received by helper", "check value under a shifted opening"} {
			t.Run(fmt.Sprintf("bin=%d label=%v/%s", rec.bin, rec.label, name), func(t *testing.T) {
				if x := chi2Uniform(seen[k]); x > chi2Limit15 {
					t.Errorf("χ² = %.1f > %d: %v", x, chi2Limit15, seen[k])
				}
			})
		}
		if x := chi2Uniform(seen[3]); x <= chi2Limit15 {
			t.Errorf("χ² of the plaintext count prefix = %.1f, not above %d: the test has no power", x, chi2Limit15)
		}
	}
}

// exchange runs both servers on r, with opening altering the first
// messages, and returns the first and second messages each server sent.
func (f *fixture) exchange(t *testing.T, r Report, opening func(int, []byte) []byte) (first, second [2][]byte) {
	t.Helper()
	var pend [2]*Pending
	for id, v := range f.srv {
		sh, vec := f.evaluate(t, id, r.Shares[id])
		var err error
		if pend[id], first[id], err = v.Prepare(r.Nonce, sh, vec); err != nil {
			t.Fatal(err)
		}
		if opening != nil {
			first[id] = opening(id, first[id])
		}
	}
	for id := range pend {
		var err error
		if second[id], err = pend[id].Exchange(first[1-id]); err != nil {
			t.Fatal(err)
		}
	}
	return first, second
}
