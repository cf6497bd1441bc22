package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/party"
)

// HL type-I setting: n instances, ε of the grid plan's {y, 1−y}
// release (the roc allocation of simulate), hlBins bins over [0, 1], B
// bootstrap draws per data set, α the level.
const (
	hlN, hlEpsilon, hlBins, hlDraws, hlAlpha = 10000, 1.0, 256, 200, 0.05
	hlMechanism                              = "kary"
)

// hlModels are the true positive rates given the model's p: calibrated,
// then two miscalibrations (issue 15).
var hlModels = []struct {
	name string
	rate func(p float64) float64
}{
	{"calibrated: y ~ Bernoulli(p)", func(p float64) float64 { return p }},
	{"y ~ Bernoulli(min(1, 1.3p))", func(p float64) float64 { return min(1, 1.3*p) }},
	{"y ~ Bernoulli(p^0.7)", func(p float64) float64 { return math.Pow(p, 0.7) }},
}

// HLTypeI measures the Hosmer–Lemeshow tests at α = 0.05 over cfg.Runs
// data sets per model: p ~ Beta(2, 5), y drawn by each of hlModels; the
// rejection rate (type-I error on the calibrated model, power on the
// others) of the noise-aware test (hosmer.Plan.NullTest, B = hlDraws),
// of the naive χ²_{G−2} on the private H, and of the non-private
// textbook test (χ²_{G−2} on the exact groups), with binomial standard
// errors. The release is the grid plan's {y, 1−y} at ε = 1 from a
// trusted curator: one noise draw, where simulate's two servers add two.
func HLTypeI(ctx context.Context, cfg Config) (*Figure, error) {
	cfg = cfg.withDefaults()
	g, err := ecdf.NewLinearGrid(0, 1, hlBins)
	if err != nil {
		return nil, err
	}
	plan, err := analysis.HosmerPlan("grid", hlEpsilon, hlBins, mechanism.Params{Name: hlMechanism})
	if err != nil {
		return nil, err
	}
	fig := &Figure{ID: "hl-typeI", Title: fmt.Sprintf("Hosmer–Lemeshow rejection rate at α = %g, n = %d, ε = %g, %s, N = %d, B = %d", hlAlpha, hlN, hlEpsilon, hlMechanism, hlBins, hlDraws),
		XLabel: "model (0 calibrated, 1: min(1, 1.3p), 2: p^0.7)", YLabel: "rejection rate", Runs: cfg.Runs}
	names := []string{"noise-aware (bootstrap)", "naive χ² on private H", "non-private χ²"}
	for _, n := range names {
		fig.Series = append(fig.Series, Series{Name: n})
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 15))
	pr := progress{cfg.Progress}
	pr.start("hl-typeI", len(hlModels)*cfg.Runs)
	defer pr.finish()
	for m, model := range hlModels {
		var rejected [3]int
		for run := range cfg.Runs {
			rej, err := hlRun(ctx, r, g, model.rate, plan, uint64(m*cfg.Runs+run))
			if err != nil {
				return nil, fmt.Errorf("%s, data set %d: %w", model.name, run+1, err)
			}
			for k := range rejected {
				if rej[k] {
					rejected[k]++
				}
			}
			pr.add()
		}
		for k := range rejected {
			rate := float64(rejected[k]) / float64(cfg.Runs)
			s := &fig.Series[k]
			s.X, s.Y = append(s.X, float64(m)), append(s.Y, rate)
			s.StdErr = append(s.StdErr, math.Sqrt(rate*(1-rate)/float64(cfg.Runs)))
		}
		fig.Notes = append(fig.Notes, fmt.Sprintf("model %d: %s", m, model.name))
	}
	fig.Notes = append(fig.Notes, "release: grid plan {y, 1−y} through a trusted curator (one noise draw); simulate's two servers add two, which the null test also simulates",
		"an undefined private H (no run here) would count as a rejection by neither test")
	return fig, nil
}

// hlRun draws one data set and says which of the three tests reject.
func hlRun(ctx context.Context, r *rand.Rand, g *ecdf.Grid, rate func(float64) float64, pl *hosmer.Plan, seed uint64) ([3]bool, error) {
	var out [3]bool
	parties := make([]*party.Party, hlN)
	for j := range parties {
		p := beta25(r)
		y := 0
		if r.Float64() < rate(p) {
			y = 1
		}
		pt, err := party.New(party.Instance{Score: p, Label: y, Probability: p, HasProbability: true}, g)
		if err != nil {
			return out, err
		}
		parties[j] = pt
	}
	u, err := newCurator(parties, hlBins)
	if err != nil {
		return out, err
	}
	rels, err := pl.Create(ctx, u)
	if err != nil {
		return out, err
	}
	h, err := analysis.RunHosmer(ctx, u, pl, rels, g, "l2", analysis.HosmerConfig(hlBins, hlN, 0), analysis.Bootstrap{Draws: hlDraws, Seed: seed})
	if err != nil {
		return out, err
	}
	out[0] = h.PValuePrivate != nil && *h.PValuePrivate <= hlAlpha
	out[1] = h.PValueNaive != nil && *h.PValueNaive <= hlAlpha
	bins, labels, probs := make([]int, hlN), make([]int, hlN), make([]float64, hlN)
	for k, p := range parties {
		bins[k], labels[k] = p.Bin(), int(p.Payload(aggregation.Label))
		probs[k] = float64(p.Payload(aggregation.Probability)) / aggregation.Probability.Scale()
	}
	exact, err := analysis.TrueHosmer(bins, labels, probs, hlBins, 0)
	if err != nil {
		return out, err
	}
	out[2] = exact.PValue <= hlAlpha
	return out, nil
}

// beta25 draws Beta(2, 5): the 2nd smallest of 6 uniforms.
func beta25(r *rand.Rand) float64 {
	a, b := math.Inf(1), math.Inf(1)
	for range 6 {
		switch v := r.Float64(); {
		case v < a:
			a, b = v, a
		case v < b:
			b = v
		}
	}
	return b
}
