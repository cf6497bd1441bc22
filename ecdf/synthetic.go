package ecdf

import (
	"fmt"
)

// PoissonGrid returns the grid of X_pois over n values: n bins over
// [0, n] with τ_v = v, so that value v falls in bin v.
func PoissonGrid(n int) (*Grid, error) {
	return NewLinearGrid(0, float64(n), n)
}

// Values lists the instances of a histogram over grid g, h[i−1] copies
// of τ_i in increasing order: the data set whose binning gives hist back.
func Values(hist []int64, g *Grid) ([]float64, error) {
	if len(hist) != g.Len() {
		return nil, fmt.Errorf("histogram has %d bins but the grid has %d", len(hist), g.Len())
	}
	var n int64
	for i, h := range hist {
		if h < 0 {
			return nil, fmt.Errorf("bin %d has a negative count %d", i+1, h)
		}
		n += h
	}
	xs := make([]float64, 0, n)
	for i, h := range hist {
		for range h {
			xs = append(xs, g.thresholds[i])
		}
	}
	return xs, nil
}
