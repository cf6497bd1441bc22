package experiment

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/plot"
	"github.com/fedecdf/fedecdf/roc"
)

// ciCoverage settings: a fraction ciPrevalence of the instances
// positive, scores N(ciShift·y, 1) on a linear grid of ciBins bins over
// [ciMin, ciMax] (values outside clamped to the end bins), two servers,
// the default mechanism "auto", replace-one.
const (
	ciPrevalence = 0.3
	ciShift      = 1.2
	ciBins       = 256
	ciMin, ciMax = -4.0, 5.0
)

// ciProbs are the quantiles whose intervals are checked.
var ciProbs = []float64{0.1, 0.25, 0.5, 0.75, 0.9}

// ciFPRs are the false positive rates at which the ROC band's pointwise
// coverage is checked, besides its coverage of the whole curve.
var ciFPRs = []float64{0.1, 0.3, 0.5}

// ciTargets name what CICoverage checks, in the order of ciRun's hits.
var ciTargets = []string{
	"ECDF band (simultaneous)", "quantiles p = 0.1…0.9 (all at once)",
	"AUC, data set (auc_ci95)", "AUC, population (auc_ci95_population)",
	"ROC band at FPR 0.1", "ROC band at FPR 0.3", "ROC band at FPR 0.5",
	"ROC band (simultaneous)",
}

// CICoverage measures the coverage of the intervals of package analysis
// (issue 15): for each size n (cfg.HLSizes), each ε (cfg.HLEpsilons)
// and each of cfg.Runs data sets of n instances drawn afresh from the
// population above, one ECDF release and one ROC release are made by
// the analysis path (analysis.NewECDF, NewROC over results with the
// exact noise law of a two-server release, analysis.DefaultIntervalDraws
// draws) and the figure reports, with binomial standard errors, how
// often the simultaneous ECDF band holds the data set's ECDF at every
// threshold, each quantile interval its grid quantile (all five at
// once), auc_ci95 the data set's binned AUC, auc_ci95_population the
// population's binned AUC (Σ_i p_i(Q_{i−1} + q_i/2) from the normal bin
// probabilities) and the simultaneous ROC band the data set's TPR at
// each of ciFPRs and at every point of its grid at once.
// One figure per n: "ci-coverage" at n = 10⁴, "ci-coverage-nN" else.
func CICoverage(ctx context.Context, cfg Config) ([]*Figure, error) {
	cfg = cfg.withDefaults()
	pr := progress{cfg.Progress}
	pr.start("ci-coverage", len(cfg.HLSizes)*len(cfg.HLEpsilons)*cfg.Runs)
	defer pr.finish()
	var figs []*Figure
	for si, n := range cfg.HLSizes {
		f, err := ciCoverage(ctx, cfg, n, uint64(si), pr)
		if err != nil {
			return nil, fmt.Errorf("n = %d: %w", n, err)
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// ciCoverage is the figure of CICoverage for data sets of n instances.
func ciCoverage(ctx context.Context, cfg Config, n int, si uint64, pr progress) (*Figure, error) {
	g, err := ecdf.NewLinearGrid(ciMin, ciMax, ciBins)
	if err != nil {
		return nil, err
	}
	popAUC := populationBinnedAUC(g)
	id := "ci-coverage"
	if n != 10000 {
		id += fmt.Sprintf("-n%d", n)
	}
	fig := &Figure{
		ID: id, Title: fmt.Sprintf("coverage of the 95 %% intervals, n = %d, auto mechanism, 2 servers", n),
		XLabel: "ε", YLabel: "coverage", LogX: true, Runs: cfg.Runs, Legend: plot.BottomRight,
		Notes: []string{
			fmt.Sprintf("data: n = %d, y ~ Bernoulli(%.1f), score ~ N(%.1f·y, 1), %d linear bins over [%g, %g]; a fresh data set per run", n, ciPrevalence, ciShift, ciBins, ciMin, ciMax),
			fmt.Sprintf("ECDF and ROC releases each at ε, mechanism auto, replace neighbours, 2 servers; %d Monte-Carlo draws per interval (analysis.DefaultIntervalDraws)", analysis.DefaultIntervalDraws),
			fmt.Sprintf("population binned AUC %.6f", popAUC),
		},
	}
	series := make([]Series, len(ciTargets))
	for k := range series {
		series[k].Name = ciTargets[k]
	}
	for ei, eps := range cfg.HLEpsilons {
		hits := make([]int, len(ciTargets))
		rng := rand.New(rand.NewPCG(cfg.Seed+si<<32, uint64(ei)))
		for range cfg.Runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			h, err := ciRun(g, n, eps, popAUC, rng)
			if err != nil {
				return nil, fmt.Errorf("ε = %g: %w", eps, err)
			}
			for k, ok := range h {
				if ok {
					hits[k]++
				}
			}
			pr.add()
		}
		for k := range series {
			c := float64(hits[k]) / float64(cfg.Runs)
			s := &series[k]
			s.X, s.Y, s.StdErr = append(s.X, eps), append(s.Y, c), append(s.StdErr, math.Sqrt(c*(1-c)/float64(cfg.Runs)))
		}
	}
	fig.Series = series
	return fig, nil
}

// ciRun draws one data set of n instances and its two releases and
// reports which intervals hold their targets (ciTargets).
func ciRun(g *ecdf.Grid, n int, eps, popAUC float64, rng *rand.Rand) ([]bool, error) {
	hit := make([]bool, len(ciTargets))
	count, pos, neg := make([]float64, ciBins), make([]float64, ciBins), make([]float64, ciBins)
	for range n {
		y := rng.Float64() < ciPrevalence
		x := rng.NormFloat64()
		if y {
			x += ciShift
		}
		b, _, err := g.BinAll([]float64{x}, true)
		if err != nil {
			return hit, err
		}
		count[b[0]-1]++
		if y {
			pos[b[0]-1]++
		} else {
			neg[b[0]-1]++
		}
	}
	for j := 1; j < ciBins; j++ {
		count[j] += count[j-1]
		pos[j] += pos[j-1]
		neg[j] += neg[j-1]
	}
	ecdfRel, err := ciRelease(n, eps, aggregation.Count)
	if err != nil {
		return hit, err
	}
	e, err := analysis.NewECDF(ciResult(ecdfRel, aggregation.Count, count, rng), g, analysis.DefaultIntervalDraws)
	if err != nil {
		return hit, err
	}
	if err := e.Smooth(analysis.DefaultSmoothing, ciProbs); err != nil {
		return hit, err
	}
	hit[0], hit[1] = true, true
	for j, c := range count {
		f := c / float64(n)
		hit[0] = hit[0] && e.Band95.Lower[j] <= f && f <= e.Band95.Upper[j]
	}
	for _, p := range ciProbs {
		j := 0
		for count[j] < p*float64(n) {
			j++
		}
		iv := e.QuantilesCI95[strconv.FormatFloat(p, 'g', -1, 64)]
		hit[1] = hit[1] && iv[0] <= e.Thresholds[j] && e.Thresholds[j] <= iv[1]
	}
	rocRel, err := ciRelease(n, eps, aggregation.Label, aggregation.NotLabel)
	if err != nil {
		return hit, err
	}
	r, err := analysis.NewROC(ciResult(rocRel, aggregation.Label, pos, rng), ciResult(rocRel, aggregation.NotLabel, neg, rng), analysis.DefaultSmoothing, analysis.DefaultIntervalDraws)
	if err != nil {
		return hit, err
	}
	truth, err := roc.FromPrefixes(pos, neg, nil)
	if err != nil {
		return hit, err
	}
	a := truth.AUC()
	hit[2] = r.AUCCI95[0] <= a && a <= r.AUCCI95[1]
	hit[3] = r.AUCCI95Population[0] <= popAUC && popAUC <= r.AUCCI95Population[1]
	for k, x := range ciFPRs {
		fpr, lo, hi, _ := r.Band95.At(x)
		t := clamp01(truth.TPRAt(fpr)) // 1 − F may be −1e-17 by rounding
		hit[4+k] = lo <= t && t <= hi
	}
	whole := 4 + len(ciFPRs)
	hit[whole] = true
	for j, x := range r.Band95.FPR {
		t := clamp01(truth.TPRAt(x))
		hit[whole] = hit[whole] && r.Band95.Lower[j] <= t && t <= r.Band95.Upper[j]
	}
	return hit, nil
}

// ciRelease is a two-server release of comps at ε (auto, replace-one)
// over n reports.
func ciRelease(n int, eps float64, comps ...aggregation.Component) (*aggregation.Release, error) {
	return aggregation.NewRelease(payload.ReleaseID{}, aggregation.ReleaseSpec{
		Mechanism:  mechanism.Params{Name: "auto", Bins: ciBins, Epsilon: eps, Relation: mechanism.ReplaceOne},
		Components: comps,
	}, n, 2)
}

// ciResult is what a two-server backend answers for component c of rel
// with true prefix sums truth: each server adds a full-scale draw of
// the component's mechanism (fresh seeds from rng).
func ciResult(rel *aggregation.Release, c aggregation.Component, truth []float64, rng *rand.Rand) *aggregation.Result {
	res := exactResult(rel, c, truth)
	prefixes := res.Prefixes
	for range rel.Servers {
		nr := rel.Mechanism(c).NewRelease(randomSeed(rng))
		for j, i := range prefixes {
			res.Sums[j] += nr.PrefixNoise(i)
		}
	}
	return res
}

// randomSeed draws a release seed from rng.
func randomSeed(rng *rand.Rand) [32]byte {
	var seed [32]byte
	for k := 0; k < 32; k += 8 {
		binary.LittleEndian.PutUint64(seed[k:], rng.Uint64())
	}
	return seed
}

// exactResult is the noise-free answer of component c of rel at every
// prefix: the true prefix sums truth.
func exactResult(rel *aggregation.Release, c aggregation.Component, truth []float64) *aggregation.Result {
	res := &aggregation.Result{Query: aggregation.Query{Release: rel, Component: c, Prefixes: analysis.AllPrefixes(len(truth))}, Sums: make([]int64, len(truth))}
	for j, v := range truth {
		res.Sums[j] = int64(v)
	}
	return res
}

// populationBinnedAUC is P(bin⁺ > bin⁻) + ½P(bin⁺ = bin⁻) of the
// population's binned scores.
func populationBinnedAUC(g *ecdf.Grid) float64 {
	cdf := func(x, mu float64) float64 { return 0.5 * math.Erfc(-(x-mu)/math.Sqrt2) }
	var auc, qBelow, prev1, prev0 float64
	for i := 1; i <= ciBins; i++ {
		c1, c0 := cdf(g.Threshold(i), ciShift), cdf(g.Threshold(i), 0)
		if i == ciBins {
			c1, c0 = 1, 1
		}
		p, q := c1-prev1, c0-prev0
		auc += p * (qBelow + q/2)
		qBelow += q
		prev1, prev0 = c1, c0
	}
	return auc
}

// clamp01 is x within [0, 1].
func clamp01(x float64) float64 { return min(max(x, 0), 1) }
