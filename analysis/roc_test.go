package analysis

import (
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
