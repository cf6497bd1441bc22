package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/roc"
)

// smallROCBins, smallPrevalence and smallShift set the data of
// TestROCIntervalsSmallN: a fraction smallPrevalence positive, scores
// N(smallShift·y, 1) on the grid of prefixSums.
const (
	smallROCBins    = 32
	smallPrevalence = 0.3
	smallShift      = 1.2
)

// populationAUC is the binned AUC P(b⁺ > b⁻) + ½P(b⁺ = b⁻) of the
// population of TestROCIntervalsSmallN on prefixSums' grid of bins bins.
func populationAUC(bins int) float64 {
	cdf := func(x, mu float64) float64 { return 0.5 * math.Erfc(-(x-mu)/math.Sqrt2) }
	var auc, below, prev1, prev0 float64
	for b := 1; b <= bins; b++ {
		c1, c0 := 1.0, 1.0
		if b < bins {
			x := -3 + 6*float64(b)/float64(bins)
			c1, c0 = cdf(x, smallShift), cdf(x, 0)
		}
		p, q := c1-prev1, c0-prev0
		auc += p * (below + q/2)
		below += q
		prev1, prev0 = c1, c0
	}
	return auc
}

// TestROCIntervalsSmallN checks the ROC intervals where hospitals are:
// two servers, ε = 1, n = 100 (noise dominates), 280 (mostly the box),
// 400 and 2000 (the bootstrap; at 400 the positives' total has noise
// CV ≈ 0.2), each over trials fresh data sets with fresh noise.
// The data set's AUC interval, the population AUC interval and the ROC
// band (whole curve) must each cover at least 0.95 − 2 s.e. (binomial,
// of trials draws): with 800 trials a true coverage of 0.90 passes that
// with probability about 6·10⁻⁴. Every interval lies in [0, 1] and has
// positive width (the noise s.d. is positive).
func TestROCIntervalsSmallN(t *testing.T) {
	if testing.Short() {
		t.Skip("coverage over 800 data sets per size")
	}
	const trials, draws = 800, 100
	popAUC := populationAUC(smallROCBins)
	for _, tc := range []struct {
		n      int
		regime string // the regime of at least an eighth of the data sets
		// dominate: the noise dominates in most data sets (1), in none
		// (−1), either (0)
		dominate int
	}{{100, RegimeNoiseDominates, 1}, {280, RegimeBox, 0}, {400, RegimeLinear, 0}, {2000, RegimeLinear, -1}} {
		t.Run(fmt.Sprintf("n=%d", tc.n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), 25))
			rel := testRelease(t, []core.Component{core.Label, core.NotLabel}, smallROCBins, tc.n, 1)
			var own, pop, band, regime, flagged int
			var width, popWidth float64
			for range trials {
				n1 := 0
				for range tc.n {
					if rng.Float64() < smallPrevalence {
						n1++
					}
				}
				pos, neg := prefixSums(n1, smallROCBins, smallShift, rng), prefixSums(tc.n-n1, smallROCBins, 0, rng)
				truth, err := roc.FromPrefixes(pos, neg, nil)
				if err != nil {
					t.Fatal(err)
				}
				r, err := NewROC(noisyResult(rel, core.Label, pos, rng), noisyResult(rel, core.NotLabel, neg, rng), "l2", draws)
				if err != nil {
					t.Fatal(err)
				}
				for _, iv := range []*[2]float64{r.AUCCI95, r.AUCCI95Population} {
					if !(0 <= iv[0] && iv[0] < iv[1] && iv[1] <= 1) {
						t.Fatalf("interval %v: want 0 ≤ lo < hi ≤ 1", *iv)
					}
				}
				width += (r.AUCCI95[1] - r.AUCCI95[0]) / trials
				popWidth += (r.AUCCI95Population[1] - r.AUCCI95Population[0]) / trials
				if a := truth.AUC(); r.AUCCI95[0] <= a && a <= r.AUCCI95[1] {
					own++
				}
				if r.AUCCI95Population[0] <= popAUC && popAUC <= r.AUCCI95Population[1] {
					pop++
				}
				if bandHoldsCurve(r.Band95, truth) {
					band++
				}
				if r.IntervalMethod == tc.regime {
					regime++
				}
				if r.NoiseDominates {
					flagged++
				}
			}
			se := math.Sqrt(0.05 * 0.95 / trials)
			t.Logf("n = %d: own %d, population %d, band %d of %d; mean widths %.3f, %.3f; regime %s in %d, noise dominates in %d", tc.n, own, pop, band, trials, width, popWidth, tc.regime, regime, flagged)
			for _, c := range []struct {
				name string
				hits int
			}{{"data set's AUC", own}, {"population AUC", pop}, {"ROC band (whole curve)", band}} {
				if cov := float64(c.hits) / trials; cov < 0.95-2*se {
					t.Errorf("%s interval coverage %.3f, want ≥ %.3f", c.name, cov, 0.95-2*se)
				}
			}
			if regime < trials/8 {
				t.Errorf("regime %s in %d of %d data sets, want at least an eighth", tc.regime, regime, trials)
			}
			if tc.dominate == 1 && flagged < trials*9/10 || tc.dominate == -1 && flagged > 0 {
				t.Errorf("noise dominates flagged in %d of %d data sets (want: %d)", flagged, trials, tc.dominate)
			}
		})
	}
}
