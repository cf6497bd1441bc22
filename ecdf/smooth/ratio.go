package smooth

import (
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// Ratio is a Monte-Carlo estimate: the mean of a per-release quantity
// and the standard error of that mean.
type Ratio struct {
	Mean, StdErr float64
}

// ErrorRatio estimates, for each method, the mean over runs releases of
// ‖F − F́‖²/‖F − F̂‖², where F is the exact ECDF of hist, F̂ a fresh release
// of m (seeds from crypto/rand, so each run spends m's budget on hist once)
// and F́ its smoothing by the method: the effect of smoothing on the DP
// error plotted in dp-ecdf Figs. 2 and 3. A ratio below 1 means smoothing
// reduced the error. A release without error (F̂ = F, possible with
// integer noise at large ε) counts as 1: smoothing leaves a feasible curve
// unchanged. runs ≥ 2 gives a standard error.
func ErrorRatio(hist []int64, m mechanism.Mechanism, methods []string, runs int) (map[string]Ratio, error) {
	truth := ecdf.ECDF(hist)
	sum := make(map[string]float64, len(methods))
	sumSq := make(map[string]float64, len(methods))
	err := eachRelease(hist, m, runs, noise.NewSeed, func(raw []float64) error {
		base := sqDist(truth, raw)
		for _, method := range methods {
			g, err := Apply(method, raw, m)
			if err != nil {
				return err
			}
			r := 1.0 // F̂ = F is feasible, so every method returns it: no effect
			if base > 0 {
				r = sqDist(truth, g) / base
			}
			sum[method] += r
			sumSq[method] += r * r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Ratio, len(methods))
	k := float64(runs)
	for method, s := range sum {
		mean := s / k
		r := Ratio{Mean: mean}
		if runs > 1 {
			r.StdErr = math.Sqrt(max(0, sumSq[method]/k-mean*mean) / (k - 1))
		}
		out[method] = r
	}
	return out, nil
}

// SmoothedMSE returns the mean over runs of (1/N)·Σ_i (n·(F́_i − F_i))²:
// the mean squared error per prefix, in counts², of releases of m on hist
// smoothed by method. Release seeds come from seeds (noise.NewSeed in
// production; a simulation generator for reproducible benchmarks).
func SmoothedMSE(hist []int64, m mechanism.Mechanism, method string, runs int, seeds func() (noise.Seed, error)) (float64, error) {
	truth := ecdf.ECDF(hist)
	n := float64(ecdf.PrefixCounts(hist)[len(hist)-1])
	sum := 0.0
	err := eachRelease(hist, m, runs, seeds, func(raw []float64) error {
		g, err := Apply(method, raw, m)
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
		return fmt.Errorf("%d runs: need at least 1 release", runs)
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

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}
