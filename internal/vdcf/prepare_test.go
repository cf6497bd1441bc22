package vdcf

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
)

// TestPrepareAllEqualsEvaluatePrepare checks that PrepareAll, at both
// servers, gives for every report what Evaluate and Prepare give: the
// same first message, sketch, second message and decision, and as
// summed components those of the prefix vector (the same aggregate; so
// does EvaluateSummed), on
// honest reports and every forgery, for both schemes, on grids whose
// highest run is whole, partial, or less than a tensor row, in batches
// of more keys than the walk takes in lockstep, with the vector kernels
// on and off.
func TestPrepareAllEqualsEvaluatePrepare(t *testing.T) {
	for _, accel := range accelPaths(t) {
		for _, prob := range []bool{false, true} {
			for _, bins := range []int{2, 9, 17, 48, 100, 1030} {
				t.Run(fmt.Sprintf("%s/probability=%v/bins=%d", accel.name, prob, bins), func(t *testing.T) {
					accel.set(t)
					f := newFixture(t, bins, 50)
					if prob {
						f = newProbFixture(t, bins, 50)
					}
					checkPrepareAll(t, f, f.reports(t, 50))
				})
			}
		}
	}
}

// reports returns honest reports at random records and one of every
// forgery, then again honest ones.
func (f *fixture) reports(t *testing.T, honest int) []Report {
	t.Helper()
	var out []Report
	for range honest {
		out = append(out, f.encode(t, f.r.IntN(f.s.bins), f.r.IntN(2) == 1))
	}
	for _, k := range f.s.Forgeries() {
		r, err := f.s.Forge(k.Kind, f.nonce(), f.r.IntN(f.s.bins), true, f.rnd, f.r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return append(out, f.encode(t, 0, true), f.encode(t, f.s.bins-1, false))
}

// checkPrepareAll is one case of TestPrepareAllEqualsEvaluatePrepare.
func checkPrepareAll(t *testing.T, f *fixture, reports []Report) {
	type side struct {
		pend    *Pending
		first   []byte
		summed  []fss.Fp // the fused path's
		vec     []fss.Fp // Evaluate's
		decoded bool
	}
	var got, want [2][]side
	for id, v := range f.srv {
		var shares []*Share
		var nonces [][NonceSize]byte
		var at []int
		got[id], want[id] = make([]side, len(reports)), make([]side, len(reports))
		for i, r := range reports {
			if sh, err := v.DecodeShare(r.Shares[id]); err == nil {
				shares, nonces, at = append(shares, sh), append(nonces, r.Nonce), append(at, i)
			}
		}
		prepared, err := v.PrepareAll(nonces, shares)
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := v.Evaluate(shares)
		if err != nil {
			t.Fatal(err)
		}
		summed, err := v.EvaluateSummed(shares)
		if err != nil {
			t.Fatal(err)
		}
		for k, i := range at {
			p, msg, err := v.Prepare(nonces[k], shares[k], vecs[k])
			if err != nil {
				t.Fatal(err)
			}
			want[id][i] = side{pend: p, first: msg, vec: vecs[k], decoded: true}
			got[id][i] = side{pend: prepared[k].Pending, first: prepared[k].Message, summed: prepared[k].Summed, decoded: true}
			if !bytes.Equal(prepared[k].Message, msg) {
				t.Fatalf("server %d, report %d: first message %x, Prepare's %x", id, i, prepared[k].Message, msg)
			}
			if a, b := prepared[k].Pending.Sketch(), p.Sketch(); !bytes.Equal(a, b) {
				t.Fatalf("server %d, report %d: sketch %x, Prepare's %x", id, i, a, b)
			}
			summedMatches(t, f.s, prepared[k].Summed, vecs[k])
			summedMatches(t, f.s, summed[k], vecs[k])
		}
	}
	for i := range reports {
		if !got[0][i].decoded || !got[1][i].decoded {
			continue
		}
		var decided [2][2]error // per path, per server
		for path, sides := range [2][2][]side{got, want} {
			var second [2][]byte
			for id := range 2 {
				var err error
				if second[id], err = sides[id][i].pend.Exchange(sides[1-id][i].first); err != nil {
					t.Fatal(err)
				}
			}
			for id := range 2 {
				decided[path][id] = sides[id][i].pend.Finish(second[1-id])
			}
		}
		if fmt.Sprint(decided[0]) != fmt.Sprint(decided[1]) {
			t.Fatalf("report %d: decisions %v, Prepare's %v", i, decided[0], decided[1])
		}
	}
}

// summedMatches checks that summed holds vec's summed components
// (Scheme.Summed), and that an aggregate adds them as it adds vec.
func summedMatches(t *testing.T, s *Scheme, summed, vec []fss.Fp) {
	t.Helper()
	m, bins := s.Components(), s.Bins()
	comp := s.Summed()
	if len(summed) != len(comp)*bins {
		t.Fatalf("summed vector of %d elements, want %d", len(summed), len(comp)*bins)
	}
	for k, c := range comp {
		for j := range bins {
			if got, want := summed[k*bins+j], vec[j*m+int(c)]; got != want {
				t.Fatalf("summed component %v at prefix %d: %d, want %d", c, j, got, want)
			}
		}
	}
	a, _ := s.NewAggregate(comp)
	b, _ := s.NewAggregate(comp)
	addVector(s, comp, a, vec)
	if err := b.AddSummed(summed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Encode(), b.Encode()) {
		t.Fatal("the summed vector's aggregate differs from the prefix vector's")
	}
}

// TestAddSummedRefusesOtherLengths checks that AddSummed refuses a
// vector of another length than the aggregate's sums, changing nothing.
func TestAddSummedRefusesOtherLengths(t *testing.T) {
	f := newFixture(t, 10, 51)
	a, err := f.s.NewAggregate(f.s.Summed())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 19, 21, 40} {
		if err := a.AddSummed(make([]fss.Fp, n)); err == nil {
			t.Errorf("a vector of %d elements for 2 components × 10 bins was added", n)
		}
	}
}

// TestPrepareAllRefusesBadInput checks that PrepareAll and
// EvaluateSummed refuse, with an error, what they cannot walk: no
// shares, a nil one, nonces not one per share.
func TestPrepareAllRefusesBadInput(t *testing.T) {
	f := newFixture(t, 10, 53)
	r := f.encode(t, 3, true)
	sh, err := f.srv[0].DecodeShare(r.Shares[0])
	if err != nil {
		t.Fatal(err)
	}
	nonce := [][NonceSize]byte{r.Nonce}
	for name, tc := range map[string]struct {
		nonces [][NonceSize]byte
		shares []*Share
	}{
		"no shares":          {nil, nil},
		"nil share":          {append(nonce, r.Nonce), []*Share{sh, nil}},
		"missing nonce":      {nonce, []*Share{sh, sh}},
		"one nonce too many": {append(nonce, r.Nonce), []*Share{sh}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := f.srv[0].PrepareAll(tc.nonces, tc.shares); err == nil {
				t.Error("PrepareAll accepted")
			}
			if len(tc.nonces) == len(tc.shares) {
				if _, err := f.srv[0].EvaluateSummed(tc.shares); err == nil {
					t.Error("EvaluateSummed accepted")
				}
			}
		})
	}
}
