package analysis

import (
	"errors"
	"testing"

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

// TestROCParams: "auto" at δ = 0 becomes ROCMechanism when the policy
// allows it, and every other release is left as asked.
func TestROCParams(t *testing.T) {
	allowAll := func(mechanism.Params) error { return nil }
	onlyAuto := func(p mechanism.Params) error {
		if p.Name != "auto" {
			return errors.New("not allowed")
		}
		return nil
	}
	for _, c := range []struct {
		name  string
		p     mechanism.Params
		allow func(mechanism.Params) error
		want  string
	}{
		{"auto", mechanism.Params{Name: "auto", Bins: 40, Epsilon: 1}, allowAll, ROCMechanism},
		{"auto, arity dropped", mechanism.Params{Name: "auto", Bins: 40, Epsilon: 1, K: 4}, allowAll, ROCMechanism},
		{"auto refused by the policy", mechanism.Params{Name: "auto", Bins: 40, Epsilon: 1}, onlyAuto, "auto"},
		{"auto with δ > 0", mechanism.Params{Name: "auto", Bins: 40, Epsilon: 1, Delta: 1e-6}, allowAll, "auto"},
		{"an explicit mechanism", mechanism.Params{Name: "kary", Bins: 40, Epsilon: 1}, allowAll, "kary"},
	} {
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
