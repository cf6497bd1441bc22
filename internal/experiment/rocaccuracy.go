package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/dataset"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/roc"
)

// rocAccEpsilons is the ε axis of roc-accuracy: the ε of the ROC release.
var rocAccEpsilons = []float64{0.5, 1, 2}

// rocMethod is one private ROC estimator of roc-accuracy: a mechanism
// for the {Label, NotLabel} pair, a public grid (scale and number of
// bins) and a smoothing of each class's ECDF.
type rocMethod struct {
	mechanism string
	scale     ecdf.Scale
	bins      int
	smoothing string
	// interpolate says whether the curve is analysis.ROC.Interpolated
	// (else its Curve: the polyline through the thresholds).
	interpolate bool
	// quantile replaces scale's thresholds by the quantiles of the
	// pooled scores (oracleThresholds): an oracle, read off the data
	// with no ε charged, bounding what any grid (public, or from
	// private quantiles) can give.
	quantile bool
}

func (m rocMethod) String() string {
	grid, bins := m.scale.String(), fmt.Sprint(m.bins)
	if m.quantile {
		grid = "quantile-oracle"
	}
	if m.bins == 0 {
		bins = "ROCBins"
	}
	s := fmt.Sprintf("%s %s N=%s %s", m.mechanism, grid, bins, m.smoothing)
	if m.interpolate {
		s += " pchip"
	}
	if m == rocDefault {
		s += " (default)"
	}
	return s
}

// rocDefault is the default estimator: analysis.NewROC on the linear
// grid of analysis.ROCBins bins, mechanism analysis.ROCMechanism, which
// analysis.ROCParams puts in place of auto at every point measured here
// (analysis's TestROCParams).
var rocDefault = rocMethod{analysis.ROCMechanism, ecdf.Linear, 0, "l2", true, false}

// rocMethods are the estimators compared: the baseline (k-ary on
// 1024 linear bins), the grid and smoothing levers, the quantile
// oracle, the previous default (mechanism auto, one tree over the grid)
// and the default (the partitioned release); bins 0 is analysis.ROCBins.
var rocMethods = []rocMethod{
	{"kary", ecdf.Linear, 1024, "l2", false, false},
	{"kary", ecdf.Linear, 256, "l2", false, false},
	{"kary", ecdf.Linear, 128, "l2", false, false},
	{"kary", ecdf.Linear, 128, "l2", true, false},
	{"kary", ecdf.Linear, 64, "l2", true, false},
	{"kary", ecdf.Linear, 32, "l2", true, false},
	{"kary", ecdf.Linear, 16, "l2", true, false},
	{"kary", ecdf.Linear, 64, "tree-l2", true, false},
	{"kary", ecdf.Log, 64, "l2", true, false},
	{"kary", ecdf.Linear, 0, "l2", true, true},
	{"kary", ecdf.Linear, 128, "l2", true, true},
	{"auto", ecdf.Linear, 0, "l2", true, false},
	rocDefault,
}

// rocScores is a data set of roc-accuracy: scores in (0, 1) and 0/1
// labels, with the exact (unbinned) ROC curve every estimator is
// measured against.
type rocScores struct {
	name   string
	scores []float64
	labels []int
	truth  analysis.Curve
}

// rocGridMin is the lower end of the log grids over the probabilities
// (scores below it fall into the first bin): public, like the grid.
const rocGridMin = 1e-4

// RocAccuracy measures the private ROC estimators rocMethods (issue 18)
// on the Bank logistic-regression probabilities (every row scored by the
// model trained on the seeded 70 % split, as the peer's figures are over
// all 45 211 records) and on synthetic probabilities of the same size
// and prevalence: for each data set, neighbouring relation and ε, the
// mean over cfg.Runs releases (one noise draw each: a curator; two
// servers double the variance) of the area between the exact unbinned
// ROC curve and the private one (analysis.ROC.AreaError), and of the
// AUC error, with standard errors. Two figures: area and AUC error.
func RocAccuracy(ctx context.Context, cfg Config) ([]*Figure, error) {
	cfg = cfg.withDefaults()
	sets, err := rocAccuracyData(cfg)
	if err != nil {
		return nil, err
	}
	var dataNotes []string
	for _, d := range sets {
		var npos int
		for _, y := range d.labels {
			npos += y
		}
		dataNotes = append(dataNotes, fmt.Sprintf("%s: n = %d, %d positives, unbinned AUC %.4f", d.name, len(d.labels), npos, d.truth.AUC))
	}
	area := &Figure{ID: "roc-accuracy", Notes: dataNotes, Title: "ROC area error vs ε (issue 18)", XLabel: "ε", YLabel: "area between exact and private ROC", LogX: true, LogY: true, Runs: cfg.Runs}
	auc := &Figure{ID: "roc-accuracy-auc", Title: "AUC error vs ε (issue 18)", XLabel: "ε", YLabel: "|AUC − AUĈ| (unbinned AUC)", LogX: true, LogY: true, Runs: cfg.Runs}
	pr := progress{cfg.Progress}
	pr.start("roc-accuracy", len(sets)*2*len(rocAccEpsilons)*len(rocMethods)*cfg.Runs)
	defer pr.finish()
	rng := rand.New(rand.NewPCG(cfg.Seed, 18))
	for _, d := range sets {
		for _, rel := range []mechanism.Relation{mechanism.AddRemove, mechanism.ReplaceOne} {
			for _, m := range rocMethods {
				a, u, notes, err := rocAccuracySeries(ctx, d, rel, m, cfg.Runs, rng, pr)
				if err != nil {
					return nil, fmt.Errorf("%s, %v, %v: %w", d.name, rel, m, err)
				}
				area.Series, auc.Series = append(area.Series, a), append(auc.Series, u)
				area.Notes = append(area.Notes, notes...)
			}
		}
	}
	return []*Figure{area, auc}, nil
}

// rocAccuracySeries measures method m on d under rel at every ε of
// rocAccEpsilons: the area and AUC error series, and notes giving the
// noise-free area error of m's grid (its discretisation floor, with
// roc.BinningFloor's prediction of it) and, for the default, the error
// of each class vector's noise alone (noiseSourcesNote).
func rocAccuracySeries(ctx context.Context, d rocScores, rel mechanism.Relation, m rocMethod, runs int, rng *rand.Rand, pr progress) (area, auc Series, notes []string, err error) {
	name := fmt.Sprintf("%s, %v, %v", d.name, rel, m)
	area, auc = Series{Name: name, Mechanism: m.mechanism}, Series{Name: name, Mechanism: m.mechanism}
	for k, eps := range rocAccEpsilons {
		mm := m
		if m.bins == 0 {
			mm.bins = analysis.ROCBins(len(d.scores), eps, rel)
		}
		pos, neg, err := rocAccuracyPrefixes(d, mm)
		if err != nil {
			return area, auc, nil, err
		}
		mm.bins = len(pos) // an oracle grid merges tied quantiles
		if k == 0 || m.bins == 0 {
			note, err := rocAccuracyNote(fmt.Sprintf("%s, ε = %g, N = %d", name, eps, mm.bins), d, rel, mm, pos, neg)
			if err != nil {
				return area, auc, nil, err
			}
			notes = append(notes, note)
		}
		r, err := aggregation.NewRelease(payload.ReleaseID{}, rocSpec(mm, eps, rel), len(d.scores), 1)
		if err != nil {
			return area, auc, nil, err
		}
		ae, ue, err := rocRuns(ctx, r, m, d, pos, neg, bothNoised, runs, rng, pr)
		if err != nil {
			return area, auc, nil, err
		}
		if m == rocDefault {
			note, err := noiseSourcesNote(ctx, fmt.Sprintf("%s, ε = %g", name, eps), r, m, d, pos, neg, runs, rng)
			if err != nil {
				return area, auc, nil, err
			}
			notes = append(notes, note)
		}
		area.X, area.Y, area.StdErr = append(area.X, eps), append(area.Y, ae.mean()), append(area.StdErr, ae.stderr())
		auc.X, auc.Y, auc.StdErr = append(auc.X, eps), append(auc.Y, ue.mean()), append(auc.StdErr, ue.stderr())
	}
	return area, auc, notes, nil
}

// noised says which of a release's two vectors, the positives' and the
// negatives', get their noise in rocRuns.
type noised [2]bool

var bothNoised = noised{true, true}

// rocRuns draws runs releases r of d's prefix sums pos and neg (with
// noise on the vectors of which), reads each with method m, and returns
// the area and AUC errors' means.
func rocRuns(ctx context.Context, r *aggregation.Release, m rocMethod, d rocScores, pos, neg []float64, which noised, runs int, rng *rand.Rand, pr progress) (area, auc meanSE, err error) {
	result := func(c core.Component, truth []float64, noisy bool) *aggregation.Result {
		if !noisy {
			return exactResult(r, c, truth)
		}
		return ciResult(r, c, truth, rng)
	}
	for range runs {
		if err := ctx.Err(); err != nil {
			return area, auc, err
		}
		c, err := analysis.NewROC(result(core.Label, pos, which[0]), result(core.NotLabel, neg, which[1]), m.smoothing, 0)
		if err != nil {
			return area, auc, err
		}
		a, u, err := rocErrors(c, m.interpolate, d.truth)
		if err != nil {
			return area, auc, err
		}
		area.add(a)
		auc.add(u)
		pr.add()
	}
	return area, auc, nil
}

// noiseSourcesNote says where the noise part of m's error comes from:
// the mean area error with only the positives' vector noised and with
// only the negatives' (runs releases each, not counted in the progress).
func noiseSourcesNote(ctx context.Context, name string, r *aggregation.Release, m rocMethod, d rocScores, pos, neg []float64, runs int, rng *rand.Rand) (string, error) {
	var area [2]meanSE
	for k, which := range []noised{{true, false}, {false, true}} {
		var err error
		if area[k], _, err = rocRuns(ctx, r, m, d, pos, neg, which, runs, rng, progress{}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%s: area error with only the positives' vector noised %.6f ± %.6f, only the negatives' %.6f ± %.6f", name, area[0].mean(), area[0].stderr(), area[1].mean(), area[1].stderr()), nil
}

// rocSpec is the ROC release of method m at ε under rel.
func rocSpec(m rocMethod, eps float64, rel mechanism.Relation) aggregation.ReleaseSpec {
	return aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: m.mechanism, Bins: m.bins, Epsilon: eps, Relation: rel}, Components: []core.Component{core.Label, core.NotLabel}}
}

// rocErrors returns the area and AUC errors of the ROC result c (its
// interpolated curve if interpolate, else its curve) against truth.
func rocErrors(c *analysis.ROC, interpolate bool, truth analysis.Curve) (area, auc float64, err error) {
	curve := c.Curve
	if interpolate {
		curve = c.Interpolated
	}
	area, err = curve.AreaError(truth)
	return area, math.Abs(curve.AUC - truth.AUC), err
}

// rocAccuracyNote says what the noise-free release of m's grid misses
// (its discretisation floor) and, under replace-one, what lever (a)
// would gain (splitNote).
func rocAccuracyNote(name string, d rocScores, rel mechanism.Relation, m rocMethod, pos, neg []float64) (string, error) {
	exact, err := aggregation.NewRelease(payload.ReleaseID{}, rocSpec(m, 1, rel), len(d.scores), 1)
	if err != nil {
		return "", err
	}
	c, err := analysis.NewROC(exactResult(exact, core.Label, pos), exactResult(exact, core.NotLabel, neg), "none", 0)
	if err != nil {
		return "", err
	}
	floor, _, err := rocErrors(c, m.interpolate, d.truth)
	if err != nil {
		return "", err
	}
	bridge, err := roc.BinningFloor(pos, neg)
	if err != nil {
		return "", err
	}
	note := fmt.Sprintf("%s: noise-free area error of the grid %.6f (roc.BinningFloor %.6f)", name, floor, bridge)
	if rel == mechanism.ReplaceOne {
		return splitNote(note, m.bins, pos[len(pos)-1], neg[len(neg)-1])
	}
	return note, nil
}

// splitNote adds to note what lever (a), unequal node scales for the
// two classes under replace-one (rocSplit), would gain at ε = 1 with
// the true class sizes (an oracle: a private estimate only does worse).
func splitNote(note string, bins int, nPos, nNeg float64) (string, error) {
	base, best, k, ratio, err := rocSplit(bins, 1, nPos, nNeg)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s; unequal split (lever a): weighted variance ×%.3f (k=%d, rate ratio u₊/u₋=%.2f)", note, best/base, k, ratio), nil
}

// rocAccuracyPrefixes bins d on m's grid over [rocGridMin or 0, 1] (or
// its oracle thresholds) and returns the exact prefix sums of the
// positives and the negatives.
func rocAccuracyPrefixes(d rocScores, m rocMethod) (pos, neg []float64, err error) {
	if m.quantile {
		t := oracleThresholds(d.scores, m.bins)
		bins := make([]int, len(d.scores))
		for k, x := range d.scores {
			i, _ := slices.BinarySearch(t, x) // first τ_i ≥ x, as ecdf.Grid.Bin
			bins[k] = i + 1
		}
		return roc.ExactPrefixes(bins, d.labels, len(t))
	}
	lo := 0.0
	if m.scale == ecdf.Log {
		lo = rocGridMin
	}
	g, err := ecdf.NewGrid(m.scale, lo, 1, m.bins)
	if err != nil {
		return nil, nil, err
	}
	bins, _, err := g.BinAll(d.scores, true)
	if err != nil {
		return nil, nil, err
	}
	return roc.ExactPrefixes(bins, d.labels, m.bins)
}

// oracleThresholds returns the thresholds of the quantile grid of about
// n bins of scores: the scores of ranks ⌈i·len/n⌉, i = 1..n, the last
// one the largest score, ties merged (so possibly fewer bins). Each bin
// holds about len/n of the instances, which roughly minimises
// roc.BinningFloor for n bins; it is read off the data (an oracle).
func oracleThresholds(scores []float64, n int) []float64 {
	s := slices.Sorted(slices.Values(scores))
	t := make([]float64, n)
	for i := range n {
		t[i] = s[((i+1)*len(s)+n-1)/n-1]
	}
	return slices.Compact(t)
}

// rocAccuracyData returns the data sets of roc-accuracy: Bank (skipped
// with errNoData when absent) and the synthetic probabilities.
func rocAccuracyData(cfg Config) ([]rocScores, error) {
	var sets []rocScores
	bankScores, bankLabels, err := bankAllRows(cfg)
	switch {
	case isNoData(err):
	case err != nil:
		return nil, err
	default:
		sets = append(sets, rocScores{name: "Bank", scores: bankScores, labels: bankLabels})
	}
	s, l := syntheticProbabilities(45211, 0.117, cfg.Seed)
	sets = append(sets, rocScores{name: "synthetic", scores: s, labels: l})
	for k := range sets {
		if sets[k].truth, err = analysis.UnbinnedROC(sets[k].scores, sets[k].labels); err != nil {
			return nil, err
		}
	}
	return sets, nil
}

// bankAllRows scores every row of the Bank data with the logistic
// regression trained on its seeded split (dataset.ScoreTable).
func bankAllRows(cfg Config) ([]float64, []int, error) {
	path := filepath.Join(cfg.DataDir, bank.file)
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("%w: %s (the paper's Bank data; see --data-dir)", errNoData, path)
	}
	t, err := dataset.ReadTable(path, 0)
	if err != nil {
		return nil, nil, err
	}
	s, err := dataset.ScoreTable(t, bank.label, bank.positive, dataset.SplitOptions{Seed: cfg.Seed})
	if err != nil {
		return nil, nil, err
	}
	return s.ScoreRows(t)
}

// syntheticProbabilities draws n scores sigmoid(z − 3.2), z ~ N(1.8·y, 1),
// y ~ Bernoulli(prevalence): a calibrated-looking classifier of AUC
// about 0.9 with most negatives near 0, as on Bank.
func syntheticProbabilities(n int, prevalence float64, seed uint64) ([]float64, []int) {
	rng := rand.New(rand.NewPCG(seed, 1818))
	s, l := make([]float64, n), make([]int, n)
	for k := range s {
		z := rng.NormFloat64() - 3.2
		if rng.Float64() < prevalence {
			l[k], z = 1, z+1.8
		}
		s[k] = 1 / (1 + math.Exp(-z))
	}
	return s, l
}
