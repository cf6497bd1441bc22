package smooth_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/cpuclock"
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
		baseline := perCall(time.Now, func() { smooth.PointwiseL2(raw) })
		for _, method := range smooth.Methods[1:] {
			b.Run(fmt.Sprintf("%s/N=2^%d", method, logN), func(b *testing.B) {
				for b.Loop() {
					if _, err := smooth.Apply(method, raw, m); err != nil {
						b.Fatal(err)
					}
				}
				perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(perOp/float64(n), "ns/point")
				b.ReportMetric(perOp/baseline, "x-l2")
				if method == "tree-l2" {
					it, _ := smooth.ExactTreeL2(raw, m)
					b.ReportMetric(float64(it), "iterations")
				}
			})
		}
	}
}

// BenchmarkTreeL2 times the exact tree-l2 on a tree release of X_pois(3)
// at ε = 1 (warm: the mechanism's tree cached, as when smoothing several
// curves of one mechanism) against the dual gradient method that tree-l2
// used before (tolerance 1e-9), in five interleaved samples of the same
// run, and reports medians: ms and cpu-ms (wall and process CPU time of
// the exact method), cold-cpu-ms (adding the tree's construction, the
// cost of a mechanism's first curve), gradient-cpu-ms and x-gradient, the
// gradient's CPU time over the exact method's in each sample. CPU time is
// the robust figure on a shared machine.
func BenchmarkTreeL2(b *testing.B) {
	for _, logN := range []int{10, 12, 14, 16} {
		raw, m := treeRelease(b, logN)
		exact := exactCall(b, raw, m)
		gradient := func() {
			if err := smooth.GradientTreeL2(raw, m); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("N=2^%d", logN), func(b *testing.B) {
			for b.Loop() {
				exact()
			}
			var wall, cpu, cold, grad, ratio []float64
			for range 5 {
				w := perCall(time.Now, exact)
				c := perCall(cpuClock, exact)
				build := perCall(cpuClock, func() { smooth.BuildPathTree(m) })
				g := perCall(cpuClock, gradient)
				wall, cpu, cold = append(wall, w), append(cpu, c), append(cold, c+build)
				grad, ratio = append(grad, g), append(ratio, g/c)
			}
			it, _ := smooth.ExactTreeL2(raw, m)
			b.ReportMetric(median(wall)/1e6, "ms")
			b.ReportMetric(median(cpu)/1e6, "cpu-ms")
			b.ReportMetric(median(cold)/1e6, "cold-cpu-ms")
			b.ReportMetric(median(grad)/1e6, "gradient-cpu-ms")
			b.ReportMetric(median(ratio), "x-gradient")
			b.ReportMetric(float64(it), "iterations")
		})
	}
}

// BenchmarkExactTreeL2 runs only the exact tree-l2 (warm, as in
// BenchmarkTreeL2), for profiles and instruction counts that the
// interleaved gradient runs of BenchmarkTreeL2 would blur.
func BenchmarkExactTreeL2(b *testing.B) {
	for _, logN := range []int{14, 16} {
		raw, m := treeRelease(b, logN)
		exact := exactCall(b, raw, m)
		exact() // builds and caches the tree
		b.Run(fmt.Sprintf("N=2^%d", logN), func(b *testing.B) {
			for b.Loop() {
				exact()
			}
		})
	}
}

// exactCall returns a call of the exact tree-l2 on raw that fails b on
// error.
func exactCall(b *testing.B, raw []float64, m mechanism.Mechanism) func() {
	return func() {
		if _, err := smooth.ExactTreeL2(raw, m); err != nil {
			b.Fatal(err)
		}
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

// cpuClock is the process's CPU time as a point in time, for perCall.
func cpuClock() time.Time { return time.Unix(0, int64(cpuclock.Process())) }

// perCall returns the nanoseconds per call of fn on clock, over at least
// 50 ms of it.
func perCall(clock func() time.Time, fn func()) float64 {
	calls, start := 0, clock()
	for clock().Sub(start) < 50*time.Millisecond {
		fn()
		calls++
	}
	return float64(clock().Sub(start).Nanoseconds()) / float64(calls)
}
