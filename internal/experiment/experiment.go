package experiment

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// Config sets the experiments. The zero value of a field means the
// paper's setting (DefaultConfig).
type Config struct {
	// Runs is the number of independent releases averaged per point
	// (dp-ecdf §6.1: 100).
	Runs int
	// Epsilons is the ε axis of the figures against ε.
	Epsilons []float64
	// Lambdas is the λ axis of Fig. 3 (X_pois(λ), ε = 1).
	Lambdas []float64
	// Lambda is the X_pois rate of the figures against ε.
	Lambda float64
	// Bins is N of X_pois (dp-ecdf §6.2.1: 2^15).
	Bins int
	// Sizes is the N axis of Fig. 7 (smoothing time).
	Sizes []int
	// Mechanisms are compared in every figure; "tree" is the paper's.
	Mechanisms []string
	// Delta is δ of the (ε, δ) mechanisms (cascade, gaussian-tree).
	Delta float64
	// Quantiles is the number of uniform probabilities p at which each
	// release's inverse ECDF is evaluated (Fig. 4).
	Quantiles int
	// Seed fixes the simulated data (not the noise, which comes from
	// crypto/rand as in production).
	Seed uint64
	// DataDir holds bank-full.csv and diabetic_data.csv (Figs 5, 6, 10);
	// those figures are skipped, with a note, when a file is absent.
	DataDir string
	// DataBins is N of the grid over [0, 1] of the predicted
	// probabilities in Figs 5, 6 and 10.
	DataBins int
	// HLSizes, HLEpsilons and HLDraws set the measurements of issue 15
	// (hl-typeI, hl-simulate, ci-coverage): the data-set sizes n, the ε
	// axis of hl-typeI and ci-coverage, and the bootstrap B of
	// hl-typeI's noise-aware test (hl-simulate uses simulate's default
	// B).
	HLSizes    []int
	HLEpsilons []float64
	HLDraws    int
	// Cells selects cells of ci-coverage's grid (issue 25): a
	// space-separated list of key=v1,v2 with keys n, eps, prev, rel,
	// servers; empty: issue 15's cells (HLSizes × HLEpsilons).
	Cells string
	// Progress, if not nil, follows the runs.
	Progress Progress
}

// Progress follows an experiment: Start(name, total runs), Add(k) runs
// done, Finish.
type Progress interface {
	Start(phase string, total int)
	Add(k int)
	Finish()
}

// DefaultConfig is the paper's setting with the mechanisms compared.
func DefaultConfig() Config {
	return Config{
		Runs:       100,
		Epsilons:   []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10},
		Lambdas:    []float64{0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100},
		Lambda:     3,
		Bins:       synthetic.PoissonBins,
		Sizes:      []int{1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16},
		Mechanisms: []string{"tree", "kary", "cascade", "auto"},
		Delta:      1e-6,
		Quantiles:  200,
		Seed:       1,
		DataDir:    "../shared/data",
		DataBins:   1024,
		HLSizes:    []int{10000, 100000},
		HLEpsilons: []float64{0.5, 1, 2},
		HLDraws:    100,
	}
}

// withDefaults fills the zero fields of c from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	orDefault(&c.Runs, d.Runs)
	orDefault(&c.Lambda, d.Lambda)
	orDefault(&c.Bins, d.Bins)
	orDefault(&c.Delta, d.Delta)
	orDefault(&c.Quantiles, d.Quantiles)
	orDefault(&c.DataDir, d.DataDir)
	orDefault(&c.DataBins, d.DataBins)
	orDefault(&c.HLDraws, d.HLDraws)
	orDefaults(&c.Epsilons, d.Epsilons)
	orDefaults(&c.Lambdas, d.Lambdas)
	orDefaults(&c.Sizes, d.Sizes)
	orDefaults(&c.Mechanisms, d.Mechanisms)
	orDefaults(&c.HLSizes, d.HLSizes)
	orDefaults(&c.HLEpsilons, d.HLEpsilons)
	return c
}

// orDefault sets *v to d when it is the zero value.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// orDefaults sets *v to d when it is nil.
func orDefaults[S ~[]E, E any](v *S, d S) {
	if *v == nil {
		*v = d
	}
}

// An experiment computes one figure.
type experiment struct {
	id, what string
	run      func(context.Context, Config) ([]*Figure, error)
}

// experiments lists the figures of dp-ecdf §6 in order.
var experiments = []experiment{
	{"fig2", "smoothing effect ‖F−F́‖²/‖F−F̂‖² vs ε on X_pois, tree (dp-ecdf Fig. 2)", one(Fig2)},
	{"fig2-kary", "Fig. 2 for k-ary tree releases (tree-l2 over the k-ary terms)", one(smoothingVsEpsilon("fig2-kary", "kary"))},
	{"fig2-cascade", "Fig. 2 for Cascade Sampling releases (tree-l2 over the dyadic terms)", one(smoothingVsEpsilon("fig2-cascade", "cascade"))},
	{"fig3", "smoothing effect vs λ of X_pois at ε = 1, tree (dp-ecdf Fig. 3)", one(Fig3)},
	{"fig4", "MSE of the ECDF and of its inverse vs ε on X_pois (dp-ecdf Fig. 4)", one(Fig4)},
	{"fig5", "ROC area error vs ε on Bank, per smoothing (dp-ecdf Fig. 5)", one(Fig5)},
	{"fig6", "Hosmer–Lemeshow relative MSE vs ε on Bank, paper and joint allocations (dp-ecdf Fig. 6)", one(Fig6)},
	{"fig7", "smoothing time vs N, absolute and relative to pointwise l2 (dp-ecdf Fig. 7)", Fig7},
	{"hl-typeI", "Hosmer–Lemeshow type-I error and power at α = 0.05 vs ε, grid and paper plans, n = 10⁴ and 10⁵, 2 servers: noise-aware vs naive vs non-private (issue 15)", HLTypeI},
	{"hl-simulate", "rejection rate at α = 0.05 of `fedecdf simulate` runs on calibrated data, n = 10⁴ and 10⁵ (issue 15's done-when)", one(HLSimulate)},
	{"fig10", "Hosmer–Lemeshow relative MSE vs ε on Diabetes (dp-ecdf Fig. 10)", one(Fig10)},
	{"roc-accuracy", "ROC area and AUC error vs ε of the private ROC estimators on Bank (all rows) and synthetic probabilities, both relations (issue 18)", RocAccuracy},
	{"ci-coverage", "coverage of the ECDF band, quantile and AUC 95 % intervals, the ROC band and the HL test's type-I error vs ε, n = 10⁴ and 10⁵ (issue 15), or cells of issue 25's grid (--cells)", CICoverage},
}

// one adapts an experiment that computes a single figure.
func one(run func(context.Context, Config) (*Figure, error)) func(context.Context, Config) ([]*Figure, error) {
	return func(ctx context.Context, cfg Config) ([]*Figure, error) {
		f, err := run(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return []*Figure{f}, nil
	}
}

// IDs lists the figures Run can compute, with what each shows.
func IDs() map[string]string {
	m := map[string]string{}
	for _, e := range experiments {
		m[e.id] = e.what
	}
	return m
}

// Run computes the figures named in only (all of them when empty), in
// the paper's order. A figure whose data set is absent is returned
// Skipped, with the reason in its notes.
func Run(ctx context.Context, cfg Config, only []string) ([]*Figure, error) {
	for _, id := range only {
		if !slices.ContainsFunc(experiments, func(e experiment) bool { return e.id == id }) {
			return nil, fmt.Errorf("unknown figure %q (valid: %s)", id, strings.Join(sortedIDs(), ", "))
		}
	}
	var figs []*Figure
	for _, e := range experiments {
		if len(only) > 0 && !slices.Contains(only, e.id) {
			continue
		}
		f, err := e.run(ctx, cfg)
		if isNoData(err) {
			figs = append(figs, &Figure{ID: e.id, Skipped: true, Notes: []string{"skipped: " + err.Error()}})
			continue
		}
		if err != nil {
			return figs, fmt.Errorf("%s: %w", e.id, err)
		}
		figs = append(figs, f...)
	}
	return figs, nil
}

func sortedIDs() []string {
	var ids []string
	for _, e := range experiments {
		ids = append(ids, e.id)
	}
	return ids
}

// newMechanism builds mechanism name for N bins at ε under replace-one,
// with δ for the (ε, δ) mechanisms ("auto" stays among the pure ε-DP
// ones, as `fedecdf simulate` does by default).
func newMechanism(name string, bins int, eps, delta float64) (mechanism.Mechanism, error) {
	p := mechanism.Params{Name: name, Bins: bins, Epsilon: eps}
	if name == "cascade" || name == "gaussian-tree" {
		p.Delta = delta
	}
	return mechanism.New(p)
}

// mechanisms returns cfg.Mechanisms without "auto" when, for cfg.Bins
// at ε = 1, it picks a mechanism that is listed anyway (its curves would
// be the same), saying so in a note.
func mechanisms(cfg Config) (names, notes []string, err error) {
	for _, name := range cfg.Mechanisms {
		if name == "auto" {
			m, err := newMechanism(name, cfg.Bins, 1, cfg.Delta)
			if err != nil {
				return nil, nil, err
			}
			if base, _, _ := strings.Cut(m.Name(), "("); slices.Contains(cfg.Mechanisms, base) {
				notes = append(notes, fmt.Sprintf("auto picks %s for N = %d (pure ε-DP), the %s curves", m.Name(), cfg.Bins, base))
				continue
			}
		}
		names = append(names, name)
	}
	return names, notes, nil
}

// seriesName names a mechanism's curve; auto says what it chose.
func seriesName(name string, m mechanism.Mechanism) string {
	switch {
	case name == "auto":
		return "auto→" + m.Name()
	case m.Delta() > 0:
		return fmt.Sprintf("%s (δ=%g)", m.Name(), m.Delta())
	}
	return m.Name()
}

// release draws one private ECDF of hist with m, with fresh noise.
func release(m mechanism.Mechanism, hist []int64) (*ecdf.Private, error) {
	seed, err := noise.NewSeed()
	if err != nil {
		return nil, err
	}
	return ecdf.NewPrivate(m, hist, seed)
}

func sqrt(v float64) float64 { return math.Sqrt(v) }

// progress wraps cfg.Progress so that a nil one does nothing.
type progress struct{ p Progress }

func (p progress) start(name string, total int) {
	if p.p != nil {
		p.p.Start(name, total)
	}
}

func (p progress) add() {
	if p.p != nil {
		p.p.Add(1)
	}
}

func (p progress) finish() {
	if p.p != nil {
		p.p.Finish()
	}
}
