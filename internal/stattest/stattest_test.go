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

// TestRegression: an exact line has r = 1, its slope and no error; a
// symmetric scatter has r = 0 and slope 0, with the textbook error
// √(Σe²/(n−2)/Σ(x−x̄)²).
func TestRegression(t *testing.T) {
	for _, tc := range []struct {
		name          string
		x, y          []float64
		r, slope, err float64
	}{
		{"line", []float64{1, 2, 3, 4, 5}, []float64{3, 5, 7, 9, 11}, 1, 2, 0},
		{"scatter", []float64{-1, -1, 1, 1}, []float64{-1, 1, -1, 1}, 0, 0, 1 / math.Sqrt(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, slope, se := Regression(tc.x, tc.y)
			if math.Abs(r-tc.r) > 1e-12 || math.Abs(slope-tc.slope) > 1e-12 || math.Abs(se-tc.err) > 1e-12 {
				t.Errorf("Regression = %v, %v, %v; want %v, %v, %v", r, slope, se, tc.r, tc.slope, tc.err)
			}
		})
	}
}
