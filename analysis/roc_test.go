package analysis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// TestROCBins: N = n·ε_v/600 within [32, 1024], ε_v = ε under
// add/remove and ε/2 under replace-one (each class vector's ε).
func TestROCBins(t *testing.T) {
	for _, c := range []struct {
		n    int
		eps  float64
		rel  mechanism.Relation
		want int
	}{
		{45211, 1, mechanism.AddRemove, 75},
		{45211, 1, mechanism.ReplaceOne, 38},
		{45211, 2, mechanism.ReplaceOne, 75},
		{45211, 0.5, mechanism.AddRemove, 38},
		{100, 1, mechanism.AddRemove, 32},
		{10_000_000, 1, mechanism.ReplaceOne, 1024},
		{0, 1, mechanism.ReplaceOne, 32},
	} {
		t.Run("", func(t *testing.T) {
			if got := ROCBins(c.n, c.eps, c.rel); got != c.want {
				t.Errorf("ROCBins(%d, %g, %v) = %d, want %d", c.n, c.eps, c.rel, got, c.want)
			}
		})
	}
}

// TestROCParams: "auto" at δ = 0 becomes ROCMechanism where the policy
// allows it and it answers the grid's end bins with less noise — at every
// point of experiment roc-accuracy (n = 45 211, N = ROCBins, ε = 0.5, 1,
// 2, both relations) and on simulate's --bins 0 grid (n = 10 000, ε =
// 0.75), not on its 256 bins — and every other release is left as asked.
func TestROCParams(t *testing.T) {
	allowAll := func(mechanism.Params) error { return nil }
	onlyAuto := func(p mechanism.Params) error {
		if p.Name != "auto" {
			return errors.New("not allowed")
		}
		return nil
	}
	type tc struct {
		name  string
		p     mechanism.Params
		allow func(mechanism.Params) error
		want  string
	}
	cases := []tc{
		{"auto, arity dropped", mechanism.Params{Name: "auto", Bins: 75, Epsilon: 1, K: 4}, nil, ROCMechanism},
		{"auto refused by the policy", mechanism.Params{Name: "auto", Bins: 75, Epsilon: 1}, onlyAuto, "auto"},
		{"auto allowed by the policy", mechanism.Params{Name: "auto", Bins: 75, Epsilon: 1}, allowAll, ROCMechanism},
		{"auto with δ > 0", mechanism.Params{Name: "auto", Bins: 75, Epsilon: 1, Delta: 1e-6}, nil, "auto"},
		{"an explicit mechanism", mechanism.Params{Name: "kary", Bins: 75, Epsilon: 1}, nil, "kary"},
		{"simulate, 256 bins: ends tie", mechanism.Params{Name: "auto", Bins: 256, Epsilon: 0.75}, nil, "auto"},
		{"simulate, ROCBins", mechanism.Params{Name: "auto", Bins: ROCBins(10000, 0.75, mechanism.ReplaceOne), Epsilon: 0.75}, nil, ROCMechanism},
	}
	for _, rel := range []mechanism.Relation{mechanism.AddRemove, mechanism.ReplaceOne} {
		for _, eps := range []float64{0.5, 1, 2} {
			p := mechanism.Params{Name: "auto", Bins: ROCBins(45211, eps, rel), Epsilon: eps, Relation: rel}
			cases = append(cases, tc{fmt.Sprintf("roc-accuracy %v ε=%g N=%d", rel, eps, p.Bins), p, nil, ROCMechanism})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ROCParams(c.p, c.allow)
			want := c.p
			want.Name = c.want
			if c.want == ROCMechanism {
				want.K = 0
			}
			if got != want {
				t.Errorf("ROCParams(%+v) = %+v, want %+v", c.p, got, want)
			}
			if _, err := mechanism.New(got); err != nil {
				t.Errorf("ROCParams gave an unbuildable release: %v", err)
			}
		})
	}
}

// SetThresholds pairs each ROC point with its score threshold: the
// grid's lower end for point 0, then τ at each read prefix.
func TestSetThresholds(t *testing.T) {
	g, err := ecdf.NewLinearGrid(0, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	rel := testRelease(t, []core.Component{core.Label, core.NotLabel}, 4, 100, 1)
	rng := rand.New(rand.NewPCG(8, 9))
	r, err := NewROC(noisyResult(rel, core.Label, []float64{10, 20, 30, 40}, rng), noisyResult(rel, core.NotLabel, []float64{30, 45, 55, 60}, rng), "l2", 0)
	if err != nil {
		t.Fatal(err)
	}
	r.SetThresholds(g)
	if want := []float64{0, 0.25, 0.5, 0.75, 1}; !slices.Equal(r.Thresholds, want) || len(r.Thresholds) != len(r.FPR) {
		t.Errorf("thresholds %v for %d points, want %v", r.Thresholds, len(r.FPR), want)
	}
}
