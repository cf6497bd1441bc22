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
			x := make([]float64, n)
			counts := make([]float64, bins)
			for k := range x {
				x[k] = hi * (1 - rng.Float64()) // in (0, 10⁵]
				b, err := g.Bin(x[k])
				if err != nil {
					t.Fatal(err)
				}
				counts[b-1]++
			}
			for j := 1; j < bins; j++ {
				counts[j] += counts[j-1]
			}
			slices.Sort(x)
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
