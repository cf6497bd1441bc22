package bench

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
)

// SmoothedMSE returns the mean over runs of (1/N)·Σ_i (n·(F́_i − F_i))²:
// the mean squared error per prefix, in counts², of releases of m on hist
// smoothed by method. Release seeds come from seeds (noise.NewSeed in
// production; a simulation generator for reproducible benchmarks).
func SmoothedMSE(hist []int64, m mechanism.Mechanism, method string, runs int, seeds func() (noise.Seed, error)) (float64, error) {
	truth := ecdf.ECDF(hist)
	n := float64(ecdf.PrefixCounts(hist)[len(hist)-1])
	sum := 0.0
	err := eachRelease(hist, m, runs, seeds, func(raw []float64) error {
		g, err := smooth.Apply(method, raw, m)
		if err != nil {
			return err
		}
		sum += sqDist(truth, g) * n * n / float64(len(g))
		return nil
	})
	return sum / float64(runs), err
}

// eachRelease calls fn with the raw curve F̂ of runs releases of m on hist.
func eachRelease(hist []int64, m mechanism.Mechanism, runs int, seeds func() (noise.Seed, error), fn func(raw []float64) error) error {
	if runs < 1 {
		return fmt.Errorf("bench: %d runs: need at least 1 release", runs)
	}
	for range runs {
		seed, err := seeds()
		if err != nil {
			return err
		}
		p, err := ecdf.NewPrivate(m, hist, seed)
		if err != nil {
			return err
		}
		if err := fn(p.Curve()); err != nil {
			return err
		}
	}
	return nil
}

// sqDist is the squared distance of two curves: ‖a − b‖².
func sqDist(a, b []float64) (s float64) {
	for i, x := range a {
		s += (x - b[i]) * (x - b[i])
	}
	return s
}
