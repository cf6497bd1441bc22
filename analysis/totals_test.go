package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
)

// TestTotalsFit: under replace-one the fit makes the released class
// totals add up to the public n exactly, is unbiased, and leaves each
// prefix with the GLS variance Var e(i) − Cov(e(i), e(N))²/(Var e_P(N) +
// Var e_M(N)), half the variance at N itself (both vectors have the same
// noise law); under add/remove (n not public) it is the identity.
func TestTotalsFit(t *testing.T) {
	const bins, n, draws = 32, 1000, 2000
	rel := testRelease(t, []core.Component{core.Label, core.NotLabel}, bins, n, 1)
	rng := rand.New(rand.NewPCG(18, 2))
	pos, neg := prefixSums(300, bins, 1, rng), prefixSums(700, bins, 0, rng)
	norm := ecdf.Normaliser{N: n, Public: true}
	if f := newTotalsFit(noisyResult(rel, core.Label, pos, rng), noisyResult(rel, core.NotLabel, neg, rng), ecdf.Normaliser{N: 990}); f != nil {
		t.Errorf("add/remove normaliser: fit %+v, want none", f)
	}
	checked := []int{0, bins / 2, bins - 1}
	var sum, sumSq [3]float64
	for range draws {
		pr, nr := noisyResult(rel, core.Label, pos, rng), noisyResult(rel, core.NotLabel, neg, rng)
		p, m := values(pr), values(nr)
		newTotalsFit(pr, nr, norm).apply(p, m)
		if d := p[bins-1] + m[bins-1] - n; math.Abs(d) > 1e-6 {
			t.Fatalf("fitted totals add up to n%+g", d)
		}
		for k, j := range checked {
			e := p[j] - pos[j]
			sum[k] += e
			sumSq[k] += e * e
		}
	}
	vp, vm := rel.RangeVariance(core.Label, 0, bins), rel.RangeVariance(core.NotLabel, 0, bins)
	for k, j := range checked {
		i := j + 1
		cov := (rel.RangeVariance(core.Label, 0, i) + vp - rel.RangeVariance(core.Label, i, bins)) / 2
		want := rel.RangeVariance(core.Label, 0, i) - cov*cov/(vp+vm)
		mean := sum[k] / draws
		got := sumSq[k]/draws - mean*mean
		// The noise is a sum of Laplace-like terms (kurtosis ≤ 6): the
		// sample variance has s.e. ≤ var·√(5/draws); 5 s.e. either way.
		if math.Abs(got-want) > 5*want*math.Sqrt(5.0/draws) || math.Abs(mean) > 5*math.Sqrt(want/draws) {
			t.Errorf("prefix %d: error mean %.3g, variance %.4g, want 0 and %.4g (unfitted %.4g)", i, mean, got, want, rel.RangeVariance(core.Label, 0, i))
		}
	}
}
