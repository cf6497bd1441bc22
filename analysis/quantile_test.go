package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
)

// The quantile intervals hold the data's own p-quantiles (not the
// grid's) on a coarse grid: 7 bins over [0, 10⁵], n = 100 or 10⁵ values
// uniform on (0, 10⁵), ε = 1, two servers, over trials fresh data sets.
// All three intervals must hold at once in at least 0.95 − 2 s.e. of
// the data sets (binomial s.e. of trials draws; a true 0.90 passes with
// probability about 10⁻³), each interval have positive width and lie in
// the grid's range. The data quantile is the lower one, x_(⌈pn⌉), and
// the average of it and the next order statistic (type 7 at p = 0.5,
// e.g. 50000.5 for 1…10⁵: the example of issue 25).
func TestQuantileIntervalHoldsDataQuantile(t *testing.T) {
	const trials, bins, hi = 400, 7, 100000.0
	probs := []float64{0.1, 0.5, 0.9}
	g, err := ecdf.NewLinearGrid(0, hi, bins)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{100, 100000} {
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		rel := testRelease(t, []core.Component{core.Count}, bins, n, 1)
		hits := 0
		for range trials {
			x := sortedUniform(n, hi, rng)
			counts := make([]float64, bins)
			for _, v := range x {
				b, err := g.Bin(v)
				if err != nil {
					t.Fatal(err)
				}
				counts[b-1]++
			}
			for j := 1; j < bins; j++ {
				counts[j] += counts[j-1]
			}
			e, err := NewECDF(noisyResult(rel, core.Count, counts, rng), g, 100)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Smooth("l2", probs); err != nil {
				t.Fatal(err)
			}
			in := true
			for _, p := range probs {
				iv := e.QuantilesCI95[strconv.FormatFloat(p, 'g', -1, 64)]
				if !(0 <= iv[0] && iv[0] < iv[1] && iv[1] <= hi) {
					t.Fatalf("n = %d: interval %v of p = %v: want 0 ≤ lo < hi ≤ %v", n, iv, p, hi)
				}
				k := int(math.Ceil(p*float64(n))) - 1
				q7 := (x[k] + x[min(k+1, n-1)]) / 2
				in = in && iv[0] <= x[k] && x[k] <= iv[1] && iv[0] <= q7 && q7 <= iv[1]
			}
			if in {
				hits++
			}
		}
		se := math.Sqrt(0.05 * 0.95 / trials)
		t.Logf("n = %d: all three quantile intervals hold in %d of %d", n, hits, trials)
		if cov := float64(hits) / trials; cov < 0.95-2*se {
			t.Errorf("n = %d: quantile intervals hold the data's quantiles in %.3f, want ≥ %.3f", n, cov, 0.95-2*se)
		}
	}
}

// sortedUniform returns the order statistics of n values uniform on
// (0, hi], drawn in O(n) instead of sorting: the partial sums
// S_1 < … < S_n of n + 1 standard exponentials over their total
// S_{n+1} have the law of n sorted uniforms on (0, 1) (Rényi).
func sortedUniform(n int, hi float64, rng *rand.Rand) []float64 {
	x := make([]float64, n)
	var s float64
	for k := range x {
		s += rng.ExpFloat64()
		x[k] = s
	}
	scale := hi / (s + rng.ExpFloat64())
	for k := range x {
		x[k] = min(x[k]*scale, hi)
	}
	return x
}

// sortedUniform's k-th value over hi has the mean k/(n + 1) and variance
// k(n − k + 1)/((n + 1)²(n + 2)) of the k-th uniform order statistic:
// over reps samples its mean lies within 4 s.e. (normalising by S_n
// instead of S_{n+1}, mean k/n, misses by 30 s.e. at k = 999), and each
// sample is sorted in (0, hi].
func TestSortedUniform(t *testing.T) {
	const n, reps, hi = 1000, 2000, 7.0
	rng := rand.New(rand.NewPCG(5, 25))
	ks := []int{1, 100, 500, 999}
	sums := make([]float64, len(ks))
	for range reps {
		x := sortedUniform(n, hi, rng)
		if !slices.IsSorted(x) || !(x[0] > 0 && x[n-1] <= hi) {
			t.Fatalf("sample not sorted in (0, %v]: %v … %v", hi, x[0], x[n-1])
		}
		for i, k := range ks {
			sums[i] += x[k-1] / hi
		}
	}
	for i, k := range ks {
		mean, want := sums[i]/reps, float64(k)/(n+1)
		se := math.Sqrt(float64(k)*float64(n-k+1)/((n+1)*(n+1)*(n+2))) / math.Sqrt(reps)
		if math.Abs(mean-want) > 4*se {
			t.Errorf("k = %d: mean %.5f, want %.5f ± %.5f (4 s.e.)", k, mean, want, 4*se)
		}
	}
}
