package ecdf

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestQuantileExactData checks that on the exact ECDF the quantile is the
// threshold of the bin holding the empirical quantile x_(⌈np⌉), i.e. the
// empirical quantile to the grid's precision.
func TestQuantileExactData(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, 1001)
	for j := range xs {
		xs[j] = 10 + 5*r.NormFloat64()
	}
	sorted := slices.Sorted(slices.Values(xs))
	for _, scale := range []Scale{Linear, Log} {
		g, err := NewGrid(scale, 0.01, 40, 500)
		if err != nil {
			t.Fatal(err)
		}
		bins, _, err := g.BinAll(xs, true)
		if err != nil {
			t.Fatal(err)
		}
		hist, _ := Histogram(bins, g.Len())
		f := CurveAt(ECDF(hist))
		for _, p := range []float64{0.001, 0.01, 0.25, 0.5, 0.75, 0.9, 0.999, 1} {
			x := sorted[int(math.Ceil(p*float64(len(xs))))-1]
			b, _, _ := g.binClamped(x)
			got, err := Quantile(f, g, p)
			if err != nil {
				t.Fatal(err)
			}
			if want := g.Threshold(b); got != want {
				t.Errorf("%v grid: quantile(%v) = %v, want τ of the bin of x_(⌈np⌉) = %v (x = %v)", scale, p, got, want, x)
			}
		}
	}
}

func TestQuantileDataOnGrid(t *testing.T) {
	// Integer data on an integer grid: quantiles are exact.
	g, err := NewLinearGrid(0, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	hist := []int64{0, 1, 1, 1, 1, 0, 0, 0, 0, 1} // values 2, 3, 4, 5, 10
	got, err := Quantiles(CurveAt(ECDF(hist)), g, []float64{0, 0.2, 0.21, 0.5, 0.8, 0.81, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, 2, 3, 4, 5, 10, 10}; !slices.Equal(got, want) {
		t.Errorf("Quantiles = %v, want %v", got, want)
	}
}

// TestQuantileIndexNonMonotone checks Algorithm 1 on noisy, non-monotone
// curves: it ends at a crossing f(i−1) < p ≤ f(i) (with f(0) = −∞ and
// f(n) = +∞ implicitly) and evaluates at most ⌈log2 n⌉ points.
func TestQuantileIndexNonMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + r.IntN(3000)
		f := make([]float64, n)
		for i := range f {
			f[i] = float64(i+1)/float64(n) + 0.1*r.NormFloat64()
		}
		p := r.Float64()
		evaluations := 0
		i, err := QuantileIndex(func(i int) float64 { evaluations++; return f[i-1] }, n, p)
		if err != nil {
			t.Fatal(err)
		}
		below := i == 1 || f[i-2] < p
		above := i == n || f[i-1] >= p
		if !below || !above {
			t.Fatalf("trial %d: n = %d, p = %v: index %d is not a crossing", trial, n, p, i)
		}
		if limit := bits.Len(uint(n - 1)); evaluations > limit {
			t.Fatalf("trial %d: %d evaluations for n = %d, more than ⌈log2 n⌉ = %d", trial, evaluations, n, limit)
		}
	}
}

func TestQuantileRejects(t *testing.T) {
	g, _ := NewLinearGrid(0, 1, 4)
	f := CurveAt([]float64{0.25, 0.5, 0.75, 1})
	for _, p := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := Quantile(f, g, p); err == nil || !strings.Contains(err.Error(), "not in [0, 1]") {
			t.Errorf("Quantile(p = %v): error %v", p, err)
		}
	}
	if _, err := Quantiles(f, g, []float64{0.5, 2}); err == nil {
		t.Error("Quantiles accepted p = 2")
	}
	if _, err := QuantileIndex(f, 0, 0.5); err == nil {
		t.Error("QuantileIndex accepted n = 0")
	}
}
