package stattest

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestNibbleLimit: NibbleLimit is the χ²_15 quantile it says it is.
func TestNibbleLimit(t *testing.T) {
	if p := (distuv.ChiSquared{K: 15}).Survival(NibbleLimit); math.Abs(p-2.5e-7)/2.5e-7 > 0.1 {
		t.Errorf("P(χ²_15 > %d) = %.3g, want 2.5e-7 within 10 %%", NibbleLimit, p)
	}
}

// TestNibbleChiSquare checks the statistic against hand-computed values.
func TestNibbleChiSquare(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    [16]int
		want float64
	}{
		{"uniform", [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0},
		{"one value", [16]int{16}, 15 * 16},
		{"two off by one", [16]int{3, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NibbleChiSquare(tc.h); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("χ² = %v, want %v", got, tc.want)
			}
		})
	}
}
