package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/roc"
)

// TestBoxAveragePrecisionExact checks envelope.averagePrecision's
// summation by parts: a box of zero width (noise s.d. 0) holds only the
// true counts, so its interval is the true average precision itself.
func TestBoxAveragePrecisionExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	for _, n := range []int{5, 40, 300} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			n1 := n / 3
			pos, neg := prefixSums(n1, 16, 1.2, rng), prefixSums(n-n1, 16, 0, rng)
			truth, err := roc.FromPrefixes(pos, neg, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := truth.PR(1).AveragePrecision()
			zero := make([]float64, len(pos))
			b := &countBox{p: pos, m: neg, sdP: zero, sdM: zero, sdSP: zero, sdSM: zero, n: float64(n)}
			r, ok := b.at(0)
			if !ok {
				t.Fatal("a box of zero width around the truth holds no counts")
			}
			if math.Abs(r.ap[0]-want) > 1e-12 || math.Abs(r.ap[1]-want) > 1e-12 {
				t.Errorf("average precision interval %v, want [%v, %v]", r.ap, want, want)
			}
		})
	}
}

// TestAveragePrecisionIntervalSmallN checks average_precision_ci95 at
// two servers, ε = 1, n = 100 (noise dominates: the box) and n = 5000
// (σ_1/T̂_1 ≈ 0.02: mostly the bootstrap of the raw AP), each
// over trials fresh data sets with fresh noise: the interval must hold
// the data set's own binned average precision in at least 0.95 − 2 s.e.
// of them (binomial s.e. of trials draws; with 800 trials a true
// coverage of 0.90 passes with probability about 6·10⁻⁴), lie in
// [0, 1] and have positive width. At n = 5000 the bootstrap must be
// used in most data sets and be narrower on average than the box's
// interval of the same releases.
func TestAveragePrecisionIntervalSmallN(t *testing.T) {
	if testing.Short() {
		t.Skip("coverage over 800 data sets per size")
	}
	const trials, draws = 800, 100
	for _, n := range []int{100, 5000} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 2525))
			rel := testRelease(t, []core.Component{core.Label, core.NotLabel}, smallROCBins, n, 1)
			sp := math.Sqrt(rel.RangeVariance(core.Label, 0, smallROCBins))
			sm := math.Sqrt(rel.RangeVariance(core.NotLabel, 0, smallROCBins))
			var hits, boot int
			var width, boxWidth float64
			for range trials {
				n1 := 0
				for range n {
					if rng.Float64() < smallPrevalence {
						n1++
					}
				}
				pos, neg := prefixSums(n1, smallROCBins, smallShift, rng), prefixSums(n-n1, smallROCBins, 0, rng)
				truth, err := roc.FromPrefixes(pos, neg, nil)
				if err != nil {
					t.Fatal(err)
				}
				pr, nr := noisyResult(rel, core.Label, pos, rng), noisyResult(rel, core.NotLabel, neg, rng)
				r, err := NewROC(pr, nr, "l2", draws)
				if err != nil {
					t.Fatal(err)
				}
				iv := r.AveragePrecisionCI95
				if iv == nil || !(0 <= iv[0] && iv[0] < iv[1] && iv[1] <= 1) {
					t.Fatalf("average precision interval %v: want 0 ≤ lo < hi ≤ 1", iv)
				}
				width += (iv[1] - iv[0]) / trials
				if ap := truth.PR(1).AveragePrecision(); iv[0] <= ap && ap <= iv[1] {
					hits++
				}
				if r.IntervalMethod == RegimeLinear && apLinear(sp, sm, r.Raw.curve.Positives, r.Raw.curve.Negatives) {
					boot++
				}
				if n == 5000 {
					_, _, box, _ := newCountBox(pr, nr, draws).boxIntervals([]float64{0, 1})
					boxWidth += (box[1] - box[0]) / trials
				}
			}
			se := math.Sqrt(0.05 * 0.95 / trials)
			t.Logf("n = %d: average precision interval holds the data set's in %d of %d; bootstrap in %d; mean width %.3f (box %.3f)", n, hits, trials, boot, width, boxWidth)
			if cov := float64(hits) / trials; cov < 0.95-2*se {
				t.Errorf("coverage %.3f, want ≥ %.3f", cov, 0.95-2*se)
			}
			if n == 5000 && (boot < trials/2 || !(width < boxWidth)) {
				t.Errorf("bootstrap in %d of %d data sets, mean width %.3f against the box's %.3f: want most and narrower", boot, trials, width, boxWidth)
			}
		})
	}
}
