package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// With smoothing "none" the smoothed MSE is the raw MSE, whose mean over
// prefixes has expectation the mechanism's exact mean variance: the mean of
// 300 single-release values lies within 5 standard errors of it, and a noise
// scale off by a factor 2 (variance ×4 or ÷4) would lie outside.
func TestSmoothedMSEOfRawCurveMatchesTheory(t *testing.T) {
	const n, runs = 1 << 10, 300
	hist, err := synthetic.PoissonHistogram(3, n, 13)
	check(t, err)
	m, err := mechanism.New(mechanism.Params{Name: "kary", Bins: n, Epsilon: 1})
	check(t, err)
	rng := rand.New(rand.NewPCG(1, 1))
	seeds := func() (noise.Seed, error) {
		var s noise.Seed
		for i := range s {
			s[i] = byte(rng.Uint32())
		}
		return s, nil
	}
	var sum, sumSq float64
	for range runs {
		v, err := SmoothedMSE(hist, m, "none", 1, seeds)
		check(t, err)
		sum, sumSq = sum+v, sumSq+v*v
	}
	mean := sum / runs
	se := math.Sqrt((sumSq/runs - mean*mean) / (runs - 1))
	want := m.MeanVariance()
	if math.Abs(want-mean) > 5*se {
		t.Fatalf("mean squared error %g, want %g ± %g", mean, want, 5*se)
	}
	if math.Abs(4*want-mean) <= 5*se || math.Abs(want/4-mean) <= 5*se {
		t.Errorf("mean %g ± %g does not tell %g from 4× or ¼ of it", mean, se, want)
	}
	smoothed, err := SmoothedMSE(hist, m, "l2", 20, seeds)
	check(t, err)
	if smoothed >= mean {
		t.Errorf("smoothed MSE %g, raw %g: want smoothing to reduce it", smoothed, mean)
	}
}
