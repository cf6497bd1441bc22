package smooth

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// BenchmarkSmooth reports ns per point of each method on a release of
// X_pois(3) at ε = 1, for N = 2^10 … 2^16, and its time relative to
// PointwiseL2 on the same curve measured in the same run (x-l2); tree-l2
// also reports its iterations. The tree-l2 runs use the tree mechanism.
func BenchmarkSmooth(b *testing.B) {
	for logN := 10; logN <= 16; logN++ {
		n := 1 << logN
		raw, m := treeRelease(b, logN)
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
					_, st, _ := treeL2(raw, m, treeOptions{})
					b.ReportMetric(float64(st.Iterations), "iterations")
				}
			})
		}
	}
}

// BenchmarkTreeL2 times the exact tree-l2 on a tree release of X_pois(3)
// at ε = 1 (warm: the mechanism's tree cached, as when smoothing several
// curves of one mechanism), and reports, from five interleaved samples
// of the same run (medians): ms, cold-ms (adding the tree's
// construction, the cost of a mechanism's first curve), gradient-ms (the
// dual gradient method that tree-l2 used before, tolerance 1e-9) and
// x-gradient, the gradient's time over the exact method's in each sample.
func BenchmarkTreeL2(b *testing.B) {
	for _, logN := range []int{10, 12, 14, 16} {
		n := 1 << logN
		raw, m := treeRelease(b, logN)
		exact := func() {
			if _, st, err := treeL2(raw, m, treeOptions{}); err != nil || !st.Exact {
				b.Fatalf("exact tree-l2: %v, %+v", err, st)
			}
		}
		b.Run(fmt.Sprintf("N=2^%d", logN), func(b *testing.B) {
			for b.Loop() {
				exact()
			}
			var warm, cold, grad, ratio []float64
			for range 5 {
				w := nsPerCall(exact)
				build := nsPerCall(func() { newPathTree(m, n) })
				g := nsPerCall(func() { treeL2(raw, m, treeOptions{Gradient: true}) })
				warm, cold, grad, ratio = append(warm, w), append(cold, w+build), append(grad, g), append(ratio, g/w)
			}
			_, st, _ := treeL2(raw, m, treeOptions{})
			b.ReportMetric(median(warm)/1e6, "ms")
			b.ReportMetric(median(cold)/1e6, "cold-ms")
			b.ReportMetric(median(grad)/1e6, "gradient-ms")
			b.ReportMetric(median(ratio), "x-gradient")
			b.ReportMetric(float64(st.Iterations), "iterations")
		})
	}
}

// treeRelease returns the raw curve of a tree release (ε = 1) of
// X_pois(3) over N = 2^logN bins, and its mechanism.
func treeRelease(b *testing.B, logN int) ([]float64, mechanism.Mechanism) {
	n := 1 << logN
	hist, err := synthetic.PoissonHistogram(3, n, 1)
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
	return p.Curve(), m
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	return s[len(s)/2]
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
