// Package synthetic draws the simulation data sets of dp-ecdf §6.
//
// They feed the experiments, benchmarks and tests, never a release's
// noise.
package synthetic

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// maxValues bounds n, as ecdf bounds the number of bins of a grid.
const maxValues = 1 << 26

// PoissonBins is N = 2^15, the number of values of the X_pois(λ) data set
// in dp-ecdf §6.2.1.
const PoissonBins = 1 << 15

// PoissonHistogram returns the X_pois(λ) data set of dp-ecdf §6.2.1 over
// the values v = 1..n as a histogram: h[v−1], the number of instances with
// φ(x) = v, is drawn independently from Poisson(λ). It is simulation data,
// drawn from a PCG generator seeded with seed (not a source of noise). Its
// ECDF rises steadily overall but at a locally varying rate. Its grid
// is ecdf.NewLinearGrid(0, n, n), on which value v falls in bin v.
func PoissonHistogram(lambda float64, n int, seed uint64) ([]int64, error) {
	if math.IsNaN(lambda) || math.IsInf(lambda, 0) || lambda <= 0 {
		return nil, fmt.Errorf("synthetic: Poisson rate λ = %g is not a positive finite number", lambda)
	}
	if n < 1 || n > maxValues {
		return nil, fmt.Errorf("synthetic: number of values %d is not in [1, %d]", n, maxValues)
	}
	pois := distuv.Poisson{Lambda: lambda, Src: rand.NewPCG(seed, 0x9e3779b97f4a7c15)}
	h := make([]int64, n)
	for v := range h {
		h[v] = int64(pois.Rand())
	}
	return h, nil
}
