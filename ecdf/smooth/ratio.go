package smooth

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// ErrorRatio returns, for each method, the mean over runs of
// ‖F − F́‖²/‖F − F̂‖², where F is the exact ECDF of hist, F̂ a fresh
// release of m (seeds from crypto/rand) and F́ its smoothing by the method:
// the effect of smoothing on the DP error plotted in dp-ecdf Figs. 2–3.
// A ratio below 1 means smoothing reduced the error.
func ErrorRatio(hist []int64, m mechanism.Mechanism, methods []string, runs int) (map[string]float64, error) {
	if runs < 1 {
		return nil, fmt.Errorf("error ratio over %d runs: need at least 1", runs)
	}
	truth := ecdf.ECDF(hist)
	sum := make(map[string]float64, len(methods))
	for range runs {
		seed, err := noise.NewSeed()
		if err != nil {
			return nil, err
		}
		p, err := ecdf.NewPrivate(m, hist, seed)
		if err != nil {
			return nil, err
		}
		raw := p.Curve()
		base := sqDist(truth, raw)
		for _, method := range methods {
			g, err := Apply(method, raw, m)
			if err != nil {
				return nil, err
			}
			sum[method] += sqDist(truth, g) / base
		}
	}
	for k := range sum {
		sum[k] /= float64(runs)
	}
	return sum, nil
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}
