package ecdf

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// BenchmarkBin measures binning one value on a grid of 2^20 bins.
func BenchmarkBin(b *testing.B) {
	for _, scale := range []Scale{Linear, Log} {
		b.Run(scale.String(), func(b *testing.B) {
			g, err := NewGrid(scale, 1, 1e6, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 1))
			xs := make([]float64, 1024)
			for j := range xs {
				xs[j] = 1 + r.Float64()*(1e6-1)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := g.Bin(xs[i%len(xs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQuantile measures Algorithm 1 on a curve of 2^20 thresholds
// and reports its speed-up over a linear scan for the same quantile,
// timed in the same run.
func BenchmarkQuantile(b *testing.B) {
	const n = 1 << 20
	hist, err := synthetic.PoissonHistogram(4, n, 1)
	if err != nil {
		b.Fatal(err)
	}
	g, err := NewLinearGrid(0, float64(n), n)
	if err != nil {
		b.Fatal(err)
	}
	f := ECDF(hist)
	at := CurveAt(f)
	scan := baselineNsPerOp(func() {
		i := 0
		for f[i] < 0.5 {
			i++
		}
	})
	b.ResetTimer()
	for b.Loop() {
		if _, err := Quantile(at, g, 0.5); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(scan/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "x-faster-than-scan")
}

// benchmarkRelease measures one release of X_pois(λ = 10) over N = 2^15
// bins with mechanism m, evaluated at every threshold (NewPrivate +
// Curve), and reports the time per prefix and the ratio to computing the
// exact ECDF of the same histogram, timed in the same run.
func benchmarkRelease(b *testing.B, m mechanism.Mechanism) {
	hist, err := synthetic.PoissonHistogram(10, m.Bins(), 1)
	if err != nil {
		b.Fatal(err)
	}
	exact := baselineNsPerOp(func() { ECDF(hist) })
	var seed noise.Seed
	b.ResetTimer()
	for b.Loop() {
		seed[0]++
		p, err := NewPrivate(m, hist, seed)
		if err != nil {
			b.Fatal(err)
		}
		p.Curve()
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(m.Bins()), "ns/prefix")
	b.ReportMetric(perOp/exact, "x-exact-ECDF")
}

// BenchmarkReleaseUniform isolates the cost of this package's release
// path with a test mechanism drawing one ChaCha20 word per prefix.
func BenchmarkReleaseUniform(b *testing.B) {
	benchmarkRelease(b, uniformMechanism{bins: synthetic.PoissonBins, a: 100})
}

// baselineNsPerOp times f over at least 100 ms and returns its mean time
// in nanoseconds, the reference a benchmark divides its own time by.
// (testing.Benchmark cannot run inside a running benchmark.)
func baselineNsPerOp(f func()) float64 {
	start := time.Now()
	runs := 0
	for time.Since(start) < 100*time.Millisecond {
		f()
		runs++
	}
	return float64(time.Since(start).Nanoseconds()) / float64(runs)
}

// BenchmarkReleaseTree measures a release of the tree mechanism of
// dp-ecdf Eq. 2 over N = 2^15 bins, evaluated at every prefix.
func BenchmarkReleaseTree(b *testing.B) {
	m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: synthetic.PoissonBins, Epsilon: 1})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkRelease(b, m)
}
