package analysis

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/party"
)

func TestClampTotals(t *testing.T) {
	for _, c := range []struct {
		name             string
		pos, neg         []float64
		wantPos, wantNeg float64
		notes            int
		notePart         string
	}{
		{"both fine", []float64{1, 3}, []float64{2, 5}, 3, 5, 0, ""},
		{"no positives", []float64{0, -0.5}, []float64{2, 5}, 1, 5, 1, "positives"},
		{"no negatives", []float64{1, 3}, []float64{0, 0.2}, 3, 1, 1, "negatives"},
		{"neither", []float64{0, -2}, []float64{0, -3}, 1, 1, 2, "raised to 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			notes := ClampTotals(c.pos, c.neg)
			if c.pos[len(c.pos)-1] != c.wantPos || c.neg[len(c.neg)-1] != c.wantNeg || len(notes) != c.notes {
				t.Fatalf("totals %v, %v and %d notes, want %v, %v and %d", c.pos, c.neg, len(notes), c.wantPos, c.wantNeg, c.notes)
			}
			if c.notes > 0 && !strings.Contains(notes[0], c.notePart) {
				t.Errorf("note %q lacks %q", notes[0], c.notePart)
			}
		})
	}
}

func TestCheckSmoothing(t *testing.T) {
	for _, c := range []struct {
		method           string
		prefixes, bins   int
		want             string
		unknown, refused bool
	}{
		{"", 0, 8, "l2", false, false},
		{"none", 4, 8, "none", false, false},
		{"tree-l2", 0, 8, "tree-l2", false, false},
		{"tree-l2", 4, 8, "", false, true},
		{"l3", 0, 8, "", true, true},
	} {
		t.Run(c.method, func(t *testing.T) {
			got, err := CheckSmoothing(c.method, c.prefixes, c.bins)
			if (err != nil) != c.refused || got != c.want || errors.Is(err, ErrUnknownSmoothing) != c.unknown {
				t.Errorf("CheckSmoothing(%q, %d, %d) = %q, %v", c.method, c.prefixes, c.bins, got, err)
			}
		})
	}
}

// newCurator returns a curator over n parties on a grid of 16 bins over
// [0, 1], the k-th with score and probability k/n and label k mod 2, and
// the grid.
func newCurator(t *testing.T, n int) (*curator.Curator, *ecdf.Grid) {
	t.Helper()
	g, _ := ecdf.NewLinearGrid(0, 1, 16)
	var parties []*party.Party
	for k := range n {
		p, err := party.New(party.Instance{Score: float64(k) / float64(n), Label: k % 2, Probability: float64(k) / float64(n), HasProbability: true}, g)
		if err != nil {
			t.Fatal(err)
		}
		parties = append(parties, p)
	}
	u, err := curator.New("analysis", g.Len(), parties, ledger.Budget{Epsilon: 1 << 60}, ledger.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	return u, g
}

func release(t *testing.T, u aggregation.UStat, eps float64, r mechanism.Relation, comps ...core.Component) *aggregation.Release {
	t.Helper()
	rel, err := u.NewRelease(context.Background(), aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 16, Epsilon: eps, Relation: r}, Components: comps})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// At ε = 2^48 the noise is zero with overwhelming probability, so the
// results are the exact ones.
func TestExactThroughCurator(t *testing.T) {
	u, g := newCurator(t, 64)
	ctx := context.Background()
	e, err := QueryECDF(ctx, u, release(t, u, 1<<48, mechanism.ReplaceOne, core.Count), g, AllPrefixes(16), DefaultIntervalDraws)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Smooth("l2", []float64{0.5}); err != nil {
		t.Fatal(err)
	}
	if e.N != 64 || !e.Public || e.Raw[15] != 1 || e.Quantiles["0.5"] != 0.5 {
		t.Errorf("ECDF: n %d public %v, F̂(max) %v, median %v", e.N, e.Public, e.Raw[15], e.Quantiles["0.5"])
	}
	r, err := QueryROC(ctx, u, release(t, u, 1<<48, mechanism.ReplaceOne, core.Label, core.NotLabel), AllPrefixes(16), "l2", DefaultIntervalDraws)
	if err != nil {
		t.Fatal(err)
	}
	b, l := make([]int, 64), make([]int, 64)
	for k := range b {
		b[k], _ = g.Bin(float64(k) / 64)
		l[k] = k % 2
	}
	truth, err := TrueROC(b, l, 16, AllPrefixes(16))
	if err != nil {
		t.Fatal(err)
	}
	if area, err := r.AreaError(truth); err != nil || area > 1e-12 || !slices.Equal(r.Raw.FPR, truth.FPR) {
		t.Errorf("ROC area error %v (%v), raw FPR %v, true %v", area, err, r.Raw.FPR, truth.FPR)
	}
	for i, f := range r.FPR { // the interpolated curve passes through the curve's points
		if k := ROCInterpolation * i; r.Interpolated.FPR[k] != f || r.Interpolated.TPR[k] != r.TPR[i] {
			t.Errorf("interpolated point %d (%g, %g) is not the curve's (%g, %g)", k, r.Interpolated.FPR[k], r.Interpolated.TPR[k], f, r.TPR[i])
		}
	}
}

// A release whose noise drives a class total below one instance still
// gives a curve, with a note: the one clamping rule.
func TestNoisyROCIsClamped(t *testing.T) {
	u, _ := newCurator(t, 2)
	for range 50 {
		r, err := QueryROC(context.Background(), u, release(t, u, 0.05, mechanism.ReplaceOne, core.Label, core.NotLabel), AllPrefixes(16), "l2", DefaultIntervalDraws)
		if err != nil {
			t.Fatalf("noisy ROC release refused: %v", err)
		}
		if len(r.Notes) > 0 {
			return
		}
	}
	t.Error("no release of 2 parties at ε = 0.05 had a class total below 1")
}
