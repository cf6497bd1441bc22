package analysis

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/roc"
)

// For k independent N(0, 1) coordinates the level-quantile of max|η_j|
// solves (2Φ(c) − 1)^k = level, here the level of the conservative order
// statistic upperQuantile reads for 95 %; the Monte-Carlo estimate of B
// draws has s.e. √(0.05·0.95/B)/f(c), f the density of the maximum.
func TestCriticalValueIndependentGaussian(t *testing.T) {
	const k, draws = 50, 4000
	sd := make([]float64, k)
	for j := range sd {
		sd[j] = 1 + float64(j) // scaled noise: the statistic divides it out
	}
	got := criticalValue(draws, 7, sd, 0.95, func(rng *rand.Rand, dst []float64) {
		for j := range dst {
			dst[j] = sd[j] * rng.NormFloat64()
		}
	})
	// upperQuantile reads the conservative order statistic: the quantile
	// at its level.
	level := float64(orderIndex(draws, 0.95, 1)+1) / draws
	g := math.Pow(level, 1.0/k) // 2Φ(c) − 1
	want := math.Sqrt2 * math.Erfinv(g)
	phi := math.Exp(-want*want/2) / math.Sqrt(2*math.Pi)
	density := k * math.Pow(g, k-1) * 2 * phi
	se := math.Sqrt(0.05*0.95/draws) / density
	if math.Abs(got-want) > 4*se {
		t.Errorf("critical value %.4f, want %.4f ± %.4f (4 s.e.)", got, want, 4*se)
	}
}

// criticalValue returns the level-quantile of max_j |η_j|/sd_j over draws
// noise vectors from draw (sd_j = 0 coordinates are skipped), drawn by
// monteCarlo with salt as the intervals' draws are.
func criticalValue(draws int, salt uint64, sd []float64, level float64, draw func(rng *rand.Rand, dst []float64)) float64 {
	return upperQuantile(monteCarlo(draws, salt, func(rng *rand.Rand, _ int) float64 {
		eta := make([]float64, len(sd))
		draw(rng, eta)
		var m float64
		for j, s := range sd {
			if s > 0 {
				m = max(m, math.Abs(eta[j])/s)
			}
		}
		return m
	}), level)
}

func TestHanleyMcNeilNull(t *testing.T) {
	// At A = 1/2 the formula is the Mann–Whitney null variance
	// (n₁ + n₀ + 1)/(12 n₁ n₀).
	for _, c := range [][2]float64{{10, 20}, {500, 9500}, {1, 1}} {
		got, want := hanleyMcNeil(0.5, c[0], c[1]), (c[0]+c[1]+1)/(12*c[0]*c[1])
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("hanleyMcNeil(0.5, %v, %v) = %g, want %g", c[0], c[1], got, want)
		}
	}
}

// testRelease returns a tree release of components over bins bins at ε
// with two servers and n public reports.
func testRelease(t *testing.T, comps []core.Component, bins, n int, eps float64) *aggregation.Release {
	t.Helper()
	rel, err := aggregation.NewRelease(payload.ReleaseID{}, aggregation.ReleaseSpec{
		Mechanism:  mechanism.Params{Name: "tree", Bins: bins, Epsilon: eps, Relation: mechanism.ReplaceOne},
		Components: comps,
	}, n, 2)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// noisyResult returns the result of component c of rel with true
// prefix sums truth and fresh noise of the release's law.
func noisyResult(rel *aggregation.Release, c core.Component, truth []float64, rng *rand.Rand) *aggregation.Result {
	prefixes := AllPrefixes(len(truth))
	eta := make([]float64, len(truth))
	newNoiseSampler(rel, c, prefixes).draw(rng, eta)
	res := &aggregation.Result{Query: aggregation.Query{Release: rel, Component: c, Prefixes: prefixes}, Sums: make([]int64, len(truth))}
	for j := range truth {
		res.Sums[j] = int64(truth[j] + eta[j])
	}
	return res
}

// prefixSums returns the prefix sums of per-bin counts drawn from a
// discretised normal(mu, 1) on [−3, 3].
func prefixSums(n, bins int, mu float64, rng *rand.Rand) []float64 {
	s := make([]float64, bins)
	for range n {
		x := rng.NormFloat64() + mu
		b := int((x + 3) / 6 * float64(bins))
		s[min(max(b, 0), bins-1)]++
	}
	for j := 1; j < bins; j++ {
		s[j] += s[j-1]
	}
	return s
}

// The band covers the whole true ECDF in 95 % of fresh releases of one
// data set, within 3 binomial s.e. (plus 0.02 for the Monte-Carlo error
// of the critical value of 200 draws); the quantile intervals, read off
// the band, cover at least as often.
func TestBandCoverage(t *testing.T) {
	const trials, bins, n = 300, 64, 2000
	rng := rand.New(rand.NewPCG(1, 2))
	truth := prefixSums(n, bins, 0, rng)
	rel := testRelease(t, []core.Component{core.Count}, bins, n, 0.5)
	g, err := ecdf.NewLinearGrid(-3, 3, bins)
	if err != nil {
		t.Fatal(err)
	}
	probs := []float64{0.1, 0.5, 0.9}
	var band, quant int
	for range trials {
		e, err := NewECDF(noisyResult(rel, core.Count, truth, rng), g, 200)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Smooth("l2", probs); err != nil {
			t.Fatal(err)
		}
		in := true
		for j := range truth {
			f := truth[j] / n
			in = in && e.Band95.Lower[j] <= f && f <= e.Band95.Upper[j]
		}
		if in {
			band++
		}
		qin := true
		for _, p := range probs {
			j, _ := firstAtLeast(truth, p*n)
			iv := e.QuantilesCI95[strconv.FormatFloat(p, 'g', -1, 64)]
			qin = qin && iv[0] <= e.Thresholds[j] && e.Thresholds[j] <= iv[1]
		}
		if qin {
			quant++
		}
	}
	t.Logf("coverage: %d of %d", band, trials)
	se := math.Sqrt(0.05 * 0.95 / trials)
	if cov := float64(band) / trials; math.Abs(cov-0.95) > 3*se+0.02 {
		t.Errorf("band coverage %.3f, want 0.95 ± %.3f", cov, 3*se+0.02)
	}
	if quant < band {
		t.Errorf("quantile intervals cover %d times, fewer than the band's %d", quant, band)
	}
}

// The interval for the data set's own binned AUC covers it in at least
// 95 % of fresh releases, minus 3 binomial s.e. and 0.02 of Monte-Carlo
// error; the ROC band holds the point estimate at every FPR of its grid,
// and covers the data set's TPR at each of rocBandChecks in 95 % of
// releases within 3 binomial s.e. plus 0.03 (the Monte-Carlo error of
// 200 draws' 2.5 % and 97.5 % quantiles, ≈ 0.011 each in probability,
// and the basic bootstrap's approximation). n = 10⁴ at ε = 1 keeps the
// noise small against the class totals, where the pointwise band is
// accurate (rocIntervals).
func TestROCIntervalsCoverage(t *testing.T) {
	const trials, bins, n = 200, 32, 10000
	rng := rand.New(rand.NewPCG(3, 4))
	pos, neg := prefixSums(n/4, bins, 1, rng), prefixSums(3*n/4, bins, 0, rng)
	truth, err := roc.FromPrefixes(pos, neg, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel := testRelease(t, []core.Component{core.Label, core.NotLabel}, bins, n, 1)
	se := math.Sqrt(0.05 * 0.95 / trials)
	var own, popWider int
	bandHits := make([]int, len(rocBandChecks))
	var whole int // releases whose band holds the true curve at every grid point
	for range trials {
		r, err := NewROC(noisyResult(rel, core.Label, pos, rng), noisyResult(rel, core.NotLabel, neg, rng), "l2", 200)
		if err != nil {
			t.Fatal(err)
		}
		if a := truth.AUC(); r.AUCCI95[0] <= a && a <= r.AUCCI95[1] {
			own++
		}
		checkBandHoldsEstimate(t, r)
		for c, x := range rocBandChecks {
			j := int(math.Round(x * (rocBandPoints - 1)))
			if y := truth.TPRAt(x); r.Band95.Lower[j] <= y && y <= r.Band95.Upper[j] {
				bandHits[c]++
			}
		}
		if bandHoldsCurve(r.Band95, truth) {
			whole++
		}
		if r.AUCCI95Population[0] <= r.AUCCI95[0] && r.AUCCI95[1] <= r.AUCCI95Population[1] {
			popWider++
		}
	}
	t.Logf("coverage: %d of %d", own, trials)

	if cov := float64(own) / trials; cov < 0.95-3*se-0.02 {
		t.Errorf("AUC interval coverage %.3f, want ≥ %.3f", cov, 0.95-3*se-0.02)
	}
	t.Logf("band coverage at FPR %v: %v of %d; whole curve %d", rocBandChecks, bandHits, trials, whole)
	// The band is simultaneous: it holds the whole curve with probability
	// at least 95 % (the box is conservative), hence each point with at
	// least that.
	if cov := float64(whole) / trials; cov < 0.95-3*se-0.03 {
		t.Errorf("ROC band holds the whole curve in %.3f of releases, want ≥ %.3f", cov, 0.95-3*se-0.03)
	}
	for c, hits := range bandHits {
		if cov := float64(hits) / trials; cov < 0.95-3*se-0.03 {
			t.Errorf("ROC band coverage at FPR %v: %.3f, want ≥ %.3f", rocBandChecks[c], cov, 0.95-3*se-0.03)
		}
	}
	if popWider != trials {
		t.Errorf("population interval contains the noise one in %d of %d releases", popWider, trials)
	}
}

// bandHoldsCurve reports whether b holds c's TPR at every FPR of its
// grid (the TPR clipped to [0, 1]: 1 − F may be −1e-17 by rounding).
func bandHoldsCurve(b *ROCBand, c *roc.Curve) bool {
	for j, x := range b.FPR {
		if y := clip01(c.TPRAt(x)); y < b.Lower[j] || y > b.Upper[j] {
			return false
		}
	}
	return true
}

// rocBandChecks are the false positive rates at which
// TestROCIntervalsCoverage checks the band's coverage.
var rocBandChecks = []float64{0.1, 0.3, 0.5}

// checkBandHoldsEstimate checks that r's ROC band, on its FPR grid from
// 0 to 1, holds r's smoothed curve (up to rounding: 1 − F may be −1e-17
// where the band is clipped to 0).
func checkBandHoldsEstimate(t *testing.T, r *ROC) {
	t.Helper()
	b := r.Band95
	if b == nil || len(b.FPR) != rocBandPoints || b.FPR[0] != 0 || b.FPR[rocBandPoints-1] != 1 {
		t.Fatalf("ROC band %+v", b)
	}
	for j, x := range b.FPR {
		if y := r.curve.TPRAt(x); !(b.Lower[j]-1e-12 <= y && y <= b.Upper[j]+1e-12) {
			t.Fatalf("ROC band at FPR %v: [%v, %v] misses the estimate %v", x, b.Lower[j], b.Upper[j], y)
		}
	}
}

// deLong against theory and simulation: (1) equal uniform masses over K
// bins give Var_pos(V₁₀) = Var_neg(V₀₁) = (1 − 1/K²)/12; (2) the AUC of
// reps data sets of n1 positives and n0 negatives drawn from binned
// normals has an empirical variance within 10 % of deLong's (its
// relative s.e. is √(2/reps) ≈ 2.2 %, so 10 % is 4.5 s.e. and a
// factor-2 mistake is caught).
func TestDeLong(t *testing.T) {
	const k = 8
	uniform := make([]float64, k)
	for j := range uniform {
		uniform[j] = float64(j+1) / k
	}
	c, err := roc.FromPrefixes(uniform, uniform, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := deLong(c, 10, 30), (1-1.0/(k*k))/12*(1.0/10+1.0/30); math.Abs(got-want) > 1e-12 {
		t.Errorf("uniform: deLong %g, want %g", got, want)
	}

	const bins, n1, n0, reps = 16, 50, 150, 4000
	rng := rand.New(rand.NewPCG(5, 6))
	var sum, sum2 float64
	for range reps {
		c, err := roc.FromPrefixes(prefixSums(n1, bins, 1, rng), prefixSums(n0, bins, 0, rng), nil)
		if err != nil {
			t.Fatal(err)
		}
		a := c.AUC()
		sum += a
		sum2 += a * a
	}
	empirical := (sum2 - sum*sum/reps) / (reps - 1)
	pop, err := roc.FromPrefixes(binnedNormalCDF(bins, 1), binnedNormalCDF(bins, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := deLong(pop, n1, n0)
	t.Logf("AUC variance: empirical %.4g, DeLong %.4g, Hanley–McNeil %.4g", empirical, got, hanleyMcNeil(pop.AUC(), n1, n0))
	if math.Abs(got/empirical-1) > 0.1 {
		t.Errorf("DeLong variance %.4g, empirical %.4g: want within 10 %%", got, empirical)
	}
}

// binnedNormalCDF is the CDF of N(mu, 1) at the bins of prefixSums'
// grid (values beyond [−3, 3] in the end bins).
func binnedNormalCDF(bins int, mu float64) []float64 {
	f := make([]float64, bins)
	for b := range f {
		f[b] = 1
		if b < bins-1 {
			f[b] = 0.5 * math.Erfc(-(-3+6*float64(b+1)/float64(bins)-mu)/math.Sqrt2)
		}
	}
	return f
}
