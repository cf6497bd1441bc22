package smooth

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

var ratioRuns = flag.Int("smooth.ratio-runs", 0, "if positive, TestErrorRatioTable prints the dp-ecdf Fig. 2 table (X_pois(3), N = 2^15) averaging this many releases per cell")

// TestErrorRatioTable prints ‖F − F́‖²/‖F − F̂‖² (mean ± standard error)
// of every smoothing method against ε on X_pois(λ = 3) with N = 2^15, for
// each mechanism: the experiment of dp-ecdf Fig. 2. It runs only with
// -smooth.ratio-runs=R (it takes minutes), e.g.
//
//	go test ./ecdf/smooth/ -run ErrorRatioTable -v -smooth.ratio-runs=10
func TestErrorRatioTable(t *testing.T) {
	if *ratioRuns <= 0 {
		t.Skip("set -smooth.ratio-runs to print the Fig. 2 table")
	}
	hist := poissonHist(t, 3, ecdf.PoissonBins, 1)
	methods := Methods[1:]
	for _, name := range []string{"tree", "kary", "cascade"} {
		var b strings.Builder
		fmt.Fprintf(&b, "%s, X_pois(3), N = 2^15, %d releases per ε:\n%6s", name, *ratioRuns, "ε")
		for _, method := range methods {
			fmt.Fprintf(&b, " %17s", method)
		}
		for _, eps := range []float64{0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 10, 100} {
			m, err := mechanism.New(mechanism.Params{Name: name, Bins: ecdf.PoissonBins, Epsilon: eps, Delta: 1e-9})
			if err != nil {
				t.Fatal(err)
			}
			r, err := ErrorRatio(hist, m, methods, *ratioRuns)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "\n%6g", eps)
			for _, method := range methods {
				fmt.Fprintf(&b, "   %.4f ± %.4f", r[method].Mean, r[method].StdErr)
			}
		}
		t.Log(b.String())
	}
}

// BenchmarkSmooth reports ns per point of each method on a release of
// X_pois(3) at ε = 1, for N = 2^10 … 2^16, and its time relative to
// PointwiseL2 on the same curve measured in the same run (x-l2); tree-l2
// also reports its iterations. The tree-l2 runs use the tree mechanism.
func BenchmarkSmooth(b *testing.B) {
	for logN := 10; logN <= 16; logN++ {
		n := 1 << logN
		hist, err := ecdf.PoissonHistogram(3, n, 1)
		if err != nil {
			b.Fatal(err)
		}
		m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: n, Epsilon: 1})
		if err != nil {
			b.Fatal(err)
		}
		p, err := ecdf.NewPrivate(m, hist, noise.Seed{byte(logN)})
		if err != nil {
			b.Fatal(err)
		}
		raw := p.Curve()
		baseline := nsPerCall(func() { PointwiseL2(raw) })
		for _, method := range Methods[1:] {
			b.Run(fmt.Sprintf("%s/N=2^%d", method, logN), func(b *testing.B) {
				for b.Loop() {
					if _, err := Apply(method, raw, m); err != nil {
						b.Fatal(err)
					}
				}
				perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(perOp/float64(n), "ns/point")
				b.ReportMetric(perOp/baseline, "x-l2")
				if method == "tree-l2" {
					_, st, _ := TreeL2(raw, m, TreeOptions{})
					b.ReportMetric(float64(st.Iterations), "iterations")
				}
			})
		}
	}
}

// nsPerCall times fn over at least 50 ms.
func nsPerCall(fn func()) float64 {
	calls, start := 0, time.Now()
	for time.Since(start) < 50*time.Millisecond {
		fn()
		calls++
	}
	return float64(time.Since(start).Nanoseconds()) / float64(calls)
}
