package experiment

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/plot"
	"github.com/fedecdf/fedecdf/roc"
)

// ciCoverage settings: scores N(ciShift·y, 1) on a linear grid of
// ciBins bins over [ciMin, ciMax] (values outside clamped to the end
// bins), the default mechanism "auto".
const (
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
	"ECDF band (simultaneous)", "quantiles p = 0.1…0.9 (all at once, data quantiles)",
	"AUC, data set (auc_ci95)", "AUC, population (auc_ci95_population)",
	"average precision, data set (average_precision_ci95)",
	"ROC band at FPR 0.1", "ROC band at FPR 0.3", "ROC band at FPR 0.5",
	"ROC band (simultaneous)", "AUC noise dominates (flag)",
	"HL noise-aware test rejects at 5 % (type-I error, calibrated p)",
}

// ciCell is one setting of the coverage grid besides ε: data-set size,
// prevalence, neighbouring relation and number of servers (1: a
// trusted curator).
type ciCell struct {
	n          int
	prevalence float64
	relation   mechanism.Relation
	servers    int
}

func (c ciCell) id() string {
	return fmt.Sprintf("ci-coverage-n%d-p%g-%s-s%d", c.n, c.prevalence, c.relation, c.servers)
}

// The axes of the coverage grid of issue 25 (CellSelector).
var (
	ciGridN          = []int{50, 100, 300, 1000, 10000, 100000}
	ciGridEpsilons   = []float64{0.1, 0.5, 1, 4}
	ciGridPrevalence = []float64{0.05, 0.3}
	ciGridRelations  = []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove}
	ciGridServers    = []int{1, 2}
)

// ciCells returns the cells and ε axis of CICoverage: with cfg.Cells
// empty, issue 15's (cfg.HLSizes × cfg.HLEpsilons, prevalence 0.3,
// replace-one, two servers); else the grid of issue 25 filtered by
// cfg.Cells, a space-separated list of key=v1,v2,… with keys n, eps,
// prev, rel (replace, addremove) and servers (1, 2); a key left out
// keeps its whole axis.
func ciCells(cfg Config) ([]ciCell, []float64, error) {
	if cfg.Cells == "" {
		var cells []ciCell
		for _, n := range cfg.HLSizes {
			cells = append(cells, ciCell{n: n, prevalence: 0.3, relation: mechanism.ReplaceOne, servers: 2})
		}
		return cells, cfg.HLEpsilons, nil
	}
	ns, eps, prevs, rels, servers := ciGridN, ciGridEpsilons, ciGridPrevalence, ciGridRelations, ciGridServers
	for _, field := range strings.Fields(cfg.Cells) {
		key, vals, ok := strings.Cut(field, "=")
		if !ok {
			return nil, nil, fmt.Errorf("experiment: --cells %q: want key=v1,v2 (keys n, eps, prev, rel, servers)", field)
		}
		var err error
		list := strings.Split(vals, ",")
		switch key {
		case "n":
			ns, err = parseList(list, strconv.Atoi)
		case "eps":
			eps, err = parseList(list, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
		case "prev":
			prevs, err = parseList(list, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
		case "rel":
			rels, err = parseList(list, mechanism.ParseRelation)
		case "servers":
			servers, err = parseList(list, strconv.Atoi)
		default:
			err = fmt.Errorf("unknown key %q (keys n, eps, prev, rel, servers)", key)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("experiment: --cells %q: %w", field, err)
		}
	}
	var cells []ciCell
	for _, s := range servers {
		for _, r := range rels {
			for _, p := range prevs {
				for _, n := range ns {
					if n < 2 || !(p > 0 && p < 1) || s < 1 {
						return nil, nil, fmt.Errorf("experiment: --cells: n = %d, prevalence %g, %d servers: want n ≥ 2, prevalence in (0, 1), servers ≥ 1", n, p, s)
					}
					cells = append(cells, ciCell{n: n, prevalence: p, relation: r, servers: s})
				}
			}
		}
	}
	return cells, eps, nil
}

// parseList parses every entry of list by parse.
func parseList[T any](list []string, parse func(string) (T, error)) ([]T, error) {
	out := make([]T, len(list))
	for k, v := range list {
		var err error
		if out[k], err = parse(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CICoverage measures the coverage of the intervals of package analysis
// (issues 15 and 25): for each cell (ciCells: size n, prevalence,
// relation, servers), each ε and each of cfg.Runs data sets of n
// instances drawn afresh (y ~ Bernoulli(prevalence), score
// N(ciShift·y, 1)), one ECDF release and one ROC release are made by the
// analysis path (analysis.NewECDF, NewROC over results with the exact
// noise law of the cell's release, analysis.DefaultIntervalDraws draws)
// and the figure reports, with binomial standard errors, how often the
// simultaneous ECDF band holds the data set's ECDF at every threshold,
// the quantile intervals the data set's own quantiles (all five at
// once), auc_ci95 the data set's binned AUC, auc_ci95_population the
// population's binned AUC (Σ_i p_i(Q_{i−1} + q_i/2) from the normal bin
// probabilities), average_precision_ci95 the data set's binned average
// precision, the ROC band the data set's TPR at each of ciFPRs and
// at every point of its grid at once, how often noise_dominates is
// set, and, on a further data set of the same law with its calibrated
// probabilities (calibratedInstance), how often the noise-aware
// Hosmer–Lemeshow test of the grid plan at ε (cfg.HLDraws null draws,
// the cell's relation and servers) rejects at 5 %: its type-I error. One figure per cell: "ci-coverage" at n = 10⁴ without cfg.Cells,
// "ci-coverage-nN" else, and ciCell.id with cfg.Cells.
func CICoverage(ctx context.Context, cfg Config) ([]*Figure, error) {
	cfg = cfg.withDefaults()
	cells, eps, err := ciCells(cfg)
	if err != nil {
		return nil, err
	}
	pr := progress{cfg.Progress}
	pr.start("ci-coverage", len(cells)*len(eps)*cfg.Runs)
	defer pr.finish()
	var figs []*Figure
	for si, c := range cells {
		id := c.id()
		if cfg.Cells == "" {
			id = "ci-coverage"
			if c.n != 10000 {
				id += fmt.Sprintf("-n%d", c.n)
			}
		}
		f, err := ciCoverage(ctx, cfg, c, eps, id, uint64(si), pr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// ciCoverage is the figure of CICoverage for cell c.
func ciCoverage(ctx context.Context, cfg Config, c ciCell, epsilons []float64, id string, si uint64, pr progress) (*Figure, error) {
	g, err := ecdf.NewLinearGrid(ciMin, ciMax, ciBins)
	if err != nil {
		return nil, err
	}
	popAUC := populationBinnedAUC(g)
	hg, err := ecdf.NewLinearGrid(0, 1, hlBins)
	if err != nil {
		return nil, err
	}
	who := "2 servers"
	if c.servers == 1 {
		who = "trusted curator"
	} else if c.servers > 2 {
		who = fmt.Sprintf("%d servers", c.servers)
	}
	fig := &Figure{
		ID: id, Title: fmt.Sprintf("coverage of the 95 %% intervals, n = %d, prevalence %g, %s, %s", c.n, c.prevalence, c.relation, who),
		XLabel: "ε", YLabel: "coverage", LogX: true, Runs: cfg.Runs, Legend: plot.BottomRight,
		Notes: []string{
			fmt.Sprintf("data: n = %d, y ~ Bernoulli(%g), score ~ N(%.1f·y, 1), %d linear bins over [%g, %g]; a fresh data set per run", c.n, c.prevalence, ciShift, ciBins, ciMin, ciMax),
			fmt.Sprintf("ECDF and ROC releases each at ε, mechanism auto, %s neighbours, %s; %d Monte-Carlo draws per interval (analysis.DefaultIntervalDraws)", c.relation, who, analysis.DefaultIntervalDraws),
			fmt.Sprintf("population binned AUC %.6f", popAUC),
			fmt.Sprintf("Hosmer–Lemeshow: a further data set per run from the same law with its calibrated probability p = P(y = 1 | score) (calibratedInstance) on %d linear bins over [0, 1], the grid plan at ε (%s, %s neighbours), the noise-aware test with B = %d null draws; an undefined H counts as no rejection; its row is a rejection rate (type-I error), goal ≤ 0.05 + 2 s.e.", hlBins, hlMechanism, c.relation, cfg.HLDraws),
		},
	}
	series := make([]Series, len(ciTargets))
	for k := range series {
		series[k].Name = ciTargets[k]
	}
	for ei, eps := range epsilons {
		hits := make([]int, len(ciTargets))
		rng := rand.New(rand.NewPCG(cfg.Seed+si<<32, uint64(ei)))
		hl, err := analysis.HosmerPlan("grid", eps, hlBins, mechanism.Params{Name: hlMechanism, Relation: c.relation})
		if err != nil {
			return nil, err
		}
		for run := range cfg.Runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			h, err := ciRun(g, c, eps, popAUC, rng)
			if err != nil {
				return nil, fmt.Errorf("ε = %g: %w", eps, err)
			}
			rej, err := hlRun(ctx, rng, hg, c.n, cfg.HLDraws, calibratedInstance(c.prevalence), []*hosmer.Plan{hl}, si<<40|uint64(ei)<<32|uint64(run), c.servers)
			if err != nil {
				return nil, fmt.Errorf("ε = %g, Hosmer–Lemeshow: %w", eps, err)
			}
			h[len(h)-1] = rej[0][0]
			for k, ok := range h {
				if ok {
					hits[k]++
				}
			}
			pr.add()
		}
		for k := range series {
			v := float64(hits[k]) / float64(cfg.Runs)
			s := &series[k]
			s.X, s.Y, s.StdErr = append(s.X, eps), append(s.Y, v), append(s.StdErr, math.Sqrt(v*(1-v)/float64(cfg.Runs)))
		}
	}
	fig.Series = series
	return fig, nil
}

// ciRun draws one data set of cell c and its two releases at ε and
// reports which intervals hold their targets (ciTargets).
func ciRun(g *ecdf.Grid, c ciCell, eps, popAUC float64, rng *rand.Rand) ([]bool, error) {
	hit := make([]bool, len(ciTargets))
	var count, pos, neg, scores []float64
	// A data set of one class has no ROC curve: draw again (the figures
	// are conditional on both classes present).
	for len(scores) == 0 || sum(pos) == 0 || sum(neg) == 0 {
		count, pos, neg, scores = make([]float64, ciBins), make([]float64, ciBins), make([]float64, ciBins), make([]float64, c.n)
		ys := make([]bool, c.n)
		for k := range c.n {
			ys[k] = rng.Float64() < c.prevalence
			scores[k] = rng.NormFloat64()
			if ys[k] {
				scores[k] += ciShift
			}
		}
		bins, _, err := g.BinAll(scores, true)
		if err != nil {
			return hit, err
		}
		for k, b := range bins {
			scores[k] = min(max(scores[k], ciMin), ciMax)
			count[b-1]++
			if ys[k] {
				pos[b-1]++
			} else {
				neg[b-1]++
			}
		}
	}
	for j := 1; j < ciBins; j++ {
		count[j] += count[j-1]
		pos[j] += pos[j-1]
		neg[j] += neg[j-1]
	}
	slices.Sort(scores)
	ecdfRel, err := ciRelease(c, eps, core.Count)
	if err != nil {
		return hit, err
	}
	e, err := analysis.NewECDF(ciResult(ecdfRel, core.Count, count, rng), g, analysis.DefaultIntervalDraws)
	if err != nil {
		return hit, err
	}
	if err := e.Smooth(analysis.DefaultSmoothing, ciProbs); err != nil {
		return hit, err
	}
	hit[0], hit[1] = true, true
	for j, v := range count {
		f := v / float64(c.n)
		hit[0] = hit[0] && e.Band95.Lower[j] <= f && f <= e.Band95.Upper[j]
	}
	for _, p := range ciProbs {
		k := int(math.Ceil(p*float64(c.n))) - 1
		iv := e.QuantilesCI95[strconv.FormatFloat(p, 'g', -1, 64)]
		hit[1] = hit[1] && iv[0] <= scores[k] && scores[k] <= iv[1]
	}
	rocRel, err := ciRelease(c, eps, core.Label, core.NotLabel)
	if err != nil {
		return hit, err
	}
	r, err := analysis.NewROC(ciResult(rocRel, core.Label, pos, rng), ciResult(rocRel, core.NotLabel, neg, rng), analysis.DefaultSmoothing, analysis.DefaultIntervalDraws)
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
	ap := truth.PR(1).AveragePrecision()
	hit[4] = r.AveragePrecisionCI95[0] <= ap && ap <= r.AveragePrecisionCI95[1]
	for k, x := range ciFPRs {
		fpr, lo, hi, _ := r.Band95.At(x)
		t := clamp01(truth.TPRAt(fpr)) // 1 − F may be −1e-17 by rounding
		hit[5+k] = lo <= t && t <= hi
	}
	whole := 5 + len(ciFPRs)
	hit[whole] = true
	for j, x := range r.Band95.FPR {
		t := clamp01(truth.TPRAt(x))
		hit[whole] = hit[whole] && r.Band95.Lower[j] <= t && t <= r.Band95.Upper[j]
	}
	hit[whole+1] = r.NoiseDominates
	return hit, nil
}

// calibratedInstance draws an instance of the cell's data with its model
// probability: y ~ Bernoulli(prevalence), x ~ N(ciShift·y, 1), and
// p = P(y = 1 | x) = expit(logit(prevalence) − ciShift²/2 + ciShift·x),
// so that y ~ Bernoulli(p) given p exactly: the model is calibrated and
// the Hosmer–Lemeshow test's rejections are its type-I errors.
func calibratedInstance(prevalence float64) func(*rand.Rand) (float64, int) {
	a := math.Log(prevalence/(1-prevalence)) - ciShift*ciShift/2
	return func(r *rand.Rand) (float64, int) {
		y := 0
		if r.Float64() < prevalence {
			y = 1
		}
		x := r.NormFloat64() + ciShift*float64(y)
		return 1 / (1 + math.Exp(-(a + ciShift*x))), y
	}
}

func sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

// ciRelease is the release of cell c of comps at ε (auto) over c.n
// reports.
func ciRelease(c ciCell, eps float64, comps ...core.Component) (*aggregation.Release, error) {
	return aggregation.NewRelease(payload.ReleaseID{}, aggregation.ReleaseSpec{
		Mechanism:  mechanism.Params{Name: "auto", Bins: ciBins, Epsilon: eps, Relation: c.relation},
		Components: comps,
	}, c.n, c.servers)
}

// ciResult is what a backend of rel.Servers servers answers for component c of rel
// with true prefix sums truth: each server adds a full-scale draw of
// the component's mechanism (fresh seeds from rng).
func ciResult(rel *aggregation.Release, c core.Component, truth []float64, rng *rand.Rand) *aggregation.Result {
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
func exactResult(rel *aggregation.Release, c core.Component, truth []float64) *aggregation.Result {
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
