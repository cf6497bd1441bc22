package noise

import (
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/stattest"
)

// BenchmarkDrawTimingCorrelation measures what still varies with the
// noise after fixed work: the correlation, over b.N draws, of each
// draw's time with the words its sampler read (which grow with |η|), for
// fixed-work draws (SampleFixed from a fresh Stream) and plain ones, and
// the extra time per word read (the least-squares slope, with its
// standard error). Wall-clock figures: a benchmark, not a test (EXPERIMENTS.md,
// "Fixed work: the derived bound").
func BenchmarkDrawTimingCorrelation(b *testing.B) {
	lap, _ := NewDiscreteLaplace(100)
	gauss, _ := NewDiscreteGaussian(1e4)
	for _, tc := range []struct {
		name string
		s    FixedWorkSampler
	}{{"laplace 100", lap}, {"gaussian 10^4", gauss}} {
		for _, fixed := range []bool{true, false} {
			name := tc.name + "/plain"
			if fixed {
				name = tc.name + "/fixed"
			}
			b.Run(name, func(b *testing.B) {
				tc.s.WordBudget() // computed once, outside the timings
				var seed Seed
				var ns, words []float64
				for i := 0; b.Loop(); i++ {
					counted := &wordCount{src: seed.Stream(5, uint64(i))}
					tc.s.Sample(counted)
					st := seed.Stream(5, uint64(i))
					start := time.Now()
					if fixed {
						SampleFixed(tc.s, st)
					} else {
						tc.s.Sample(st)
					}
					ns = append(ns, float64(time.Since(start).Nanoseconds()))
					words = append(words, float64(counted.n))
				}
				r, slope, se := stattest.Regression(words, ns)
				b.ReportMetric(r, "corr(time,words)")
				b.ReportMetric(slope, "ns/word")
				b.ReportMetric(se, "ns/word_s.e.")
			})
		}
	}
}
