package ecdf

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// PoissonBins is N = 2^15, the number of values of the X_pois(λ) data set
// in dp-ecdf §6.2.1.
const PoissonBins = 1 << 15

// PoissonHistogram returns the X_pois(λ) data set of dp-ecdf §6.2.1 over
// the values v = 1..n as a histogram: h[v−1], the number of instances with
// φ(x) = v, is drawn independently from Poisson(λ). It is simulation data,
// drawn from a PCG generator seeded with seed (not a source of noise). Its
// ECDF rises steadily overall but at a locally varying rate. Use
// PoissonGrid(n) as its grid, and Values to list its instances.
func PoissonHistogram(lambda float64, n int, seed uint64) ([]int64, error) {
	if math.IsNaN(lambda) || math.IsInf(lambda, 0) || lambda <= 0 {
		return nil, fmt.Errorf("ecdf: Poisson rate λ = %g is not a positive finite number", lambda)
	}
	if n < 1 || n > maxBins {
		return nil, fmt.Errorf("number of values %d is not in [1, %d]", n, maxBins)
	}
	pois := distuv.Poisson{Lambda: lambda, Src: rand.NewPCG(seed, 0x9e3779b97f4a7c15)}
	h := make([]int64, n)
	for v := range h {
		h[v] = int64(pois.Rand())
	}
	return h, nil
}

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
