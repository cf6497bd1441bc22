package vdcf

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// resketched runs both servers on r, each preparing its share by
// Prepare and again by Resketch from the first's sketch (as another
// process would), checks that both preparations send the same first
// message, and returns the decisions reached from the resketched ones.
func (f *fixture) resketched(t *testing.T, r Report) [2]error {
	t.Helper()
	var pend [2]*Pending
	var msg [2][]byte
	for id, v := range f.srv {
		sh, err := v.DecodeShare(r.Shares[id])
		if err != nil {
			return [2]error{err, err}
		}
		out, err := v.Evaluate([]*Share{sh})
		if err != nil {
			t.Fatal(err)
		}
		p, first, err := v.Prepare(r.Nonce, sh, out[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sketch()) != f.s.SketchSize() {
			t.Fatalf("sketch of %d bytes, SketchSize %d", len(p.Sketch()), f.s.SketchSize())
		}
		if pend[id], msg[id], err = v.Resketch(r.Nonce, sh, p.Sketch()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(msg[id], first) {
			t.Fatalf("server %d: Resketch's first message differs from Prepare's", id)
		}
	}
	return exchange(pend, msg)
}

// TestResketchDecidesAsPrepare checks that a verification started from
// a sketch (Resketch) sends Prepare's first message and decides as
// Prepare does: honest reports accepted, every forgery rejected with
// its reason, with and without the probability.
func TestResketchDecidesAsPrepare(t *testing.T) {
	for _, prob := range []bool{false, true} {
		t.Run(fmt.Sprintf("probability=%v", prob), func(t *testing.T) {
			f := newFixture(t, 16, 41)
			if prob {
				f = newProbFixture(t, 16, 41)
			}
			for bin := range 16 {
				if errs := f.resketched(t, f.encode(t, bin, bin%2 == 0)); errs[0] != nil || errs[1] != nil {
					t.Fatalf("honest report at bin %d rejected: %v", bin, errs)
				}
			}
			for _, k := range f.s.Forgeries() {
				t.Run(k.Name, func(t *testing.T) {
					r, err := f.s.Forge(k.Kind, f.nonce(), 3, true, f.rnd, f.r)
					if err != nil {
						t.Fatal(err)
					}
					for id, err := range f.resketched(t, r) {
						if !errors.Is(err, k.Want) {
							t.Errorf("server %d: %v, want %v", id, err, k.Want)
						}
					}
				})
			}
		})
	}
}

// TestResketchRefusesBadSketches checks that a sketch of another length
// or with an element not below the modulus is ErrMalformed, and that
// the sketch of another report makes an honest report fail its check.
func TestResketchRefusesBadSketches(t *testing.T) {
	f := newFixture(t, 16, 42)
	a, b := f.encode(t, 2, true), f.encode(t, 9, false)
	shA, vecA := f.evaluate(t, 0, a.Shares[0])
	_, vecB := f.evaluate(t, 0, b.Shares[0])
	pb, _, err := f.srv[0].Prepare(b.Nonce, shA, vecB)
	if err != nil {
		t.Fatal(err)
	}
	pa, _, err := f.srv[0].Prepare(a.Nonce, shA, vecA)
	if err != nil {
		t.Fatal(err)
	}
	huge := pa.Sketch()
	copy(huge[8:16], bytes.Repeat([]byte{0xff}, 8))
	for _, tc := range []struct {
		name   string
		sketch []byte
	}{
		{"short", pa.Sketch()[1:]},
		{"long", append(pa.Sketch(), 0)},
		{"element above the modulus", huge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := f.srv[0].Resketch(a.Nonce, shA, tc.sketch); !errors.Is(err, verify.ErrMalformed) {
				t.Errorf("Resketch: %v, want ErrMalformed", err)
			}
		})
	}
	t.Run("another report's", func(t *testing.T) {
		shH, vecH := f.evaluate(t, 1, a.Shares[1])
		pl, m0, err := f.srv[0].Resketch(a.Nonce, shA, pb.Sketch())
		if err != nil {
			t.Fatal(err)
		}
		ph, m1, err := f.srv[1].Prepare(a.Nonce, shH, vecH)
		if err != nil {
			t.Fatal(err)
		}
		s0, err := pl.Exchange(m1)
		if err != nil {
			t.Fatal(err)
		}
		s1, err := ph.Exchange(m0)
		if err != nil {
			t.Fatal(err)
		}
		if err := ph.Finish(s0); !errors.Is(err, verify.ErrProof) {
			t.Errorf("helper: %v, want ErrProof", err)
		}
		if err := pl.Finish(s1); !errors.Is(err, verify.ErrProof) {
			t.Errorf("leader: %v, want ErrProof", err)
		}
	})
}

// TestSketchKnownAnswer pins the encoding of a sketch, which the
// PostgreSQL store keeps between a role's processes: a change is a
// breaking change of stored preparations (bump Version).
func TestSketchKnownAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		prob bool
		size int
		want string
	}{
		{"count and label", false, 80, "3ee6dda26c211cd0f562f7237cd697799cfcd3cb0f3591ca019ca03150686a6c"},
		{"with probability", true, 96, "7a9c6bf0668e3df59105ee447dac269fd89e4be533732a776101b33cf919ef99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, r := katReport(t, tc.prob)
			h := sha256.New()
			for id := range f.srv {
				sh, vec := f.evaluate(t, id, r.Shares[id])
				p, _, err := f.srv[id].Prepare(r.Nonce, sh, vec)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Sketch()) != tc.size || f.s.SketchSize() != tc.size {
					t.Errorf("server %d: sketch of %d bytes, SketchSize %d, want %d", id, len(p.Sketch()), f.s.SketchSize(), tc.size)
				}
				h.Write(p.Sketch())
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != tc.want {
				t.Errorf("sketches hash %s, want %s", got, tc.want)
			}
		})
	}
}

// TestAggregateEncodedSplits checks that folds of a split of the
// reports, encoded and added (as a role's processes fold batches and a
// release sums them), equal the aggregate of all of them; that the
// encoding is pinned (it is stored between processes: a change is a
// breaking change, bump Version); and that a bad encoding is refused
// without changing the aggregate.
func TestAggregateEncodedSplits(t *testing.T) {
	f := newFixture(t, 13, 43)
	comp := []payload.Component{payload.Count, payload.Label}
	whole, err := f.s.NewAggregate(comp)
	if err != nil {
		t.Fatal(err)
	}
	summed, _ := f.s.NewAggregate(comp)
	for part := range 3 {
		fold, _ := f.s.NewAggregate(comp)
		for range 4 + part {
			vec := make([]fss.Fp, 13*f.s.Components())
			for i := range vec {
				vec[i] = fss.Fp(fss.Modulus - 1 - f.r.Uint64N(3))
			}
			addVector(f.s, comp, whole, vec)
			addVector(f.s, comp, fold, vec)
		}
		if err := summed.AddEncoded(fold.Encode()); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(summed.Encode(), whole.Encode()) {
		t.Fatal("the folds' encodings added differ from the aggregate of all reports")
	}
	one, _ := f.s.NewAggregate(comp)
	vec := make([]fss.Fp, 13*f.s.Components())
	for i := range vec {
		vec[i] = fss.Fp(i)
	}
	addVector(f.s, comp, one, vec)
	h := sha256.Sum256(one.Encode())
	if got, want := hex.EncodeToString(h[:]), "ff4791ff42d2c065c669f7643de14cabc8c4a94a7863e4fc37811044d1846f5d"; got != want {
		t.Errorf("encoding hashes %s, want %s", got, want)
	}
	before := summed.Encode()
	bad := whole.Encode()
	copy(bad[8:16], bytes.Repeat([]byte{0xff}, 8))
	for _, b := range [][]byte{whole.Encode()[8:], bad} {
		if err := summed.AddEncoded(b); err == nil {
			t.Error("a bad encoding was added")
		}
	}
	if !bytes.Equal(summed.Encode(), before) {
		t.Error("a refused encoding changed the aggregate")
	}
}
