package experiment

import (
	"context"
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/party"
)

// Fig6 reproduces dp-ecdf Fig. 6 (§6.6) on the Bank data and Fig10 the
// appendix's Fig. 10 on Diabetes: for each ε the relative mean squared
// error E[(Ĥ − H)²]/H² of the private Hosmer–Lemeshow statistic (Q = 10,
// dp-ecdf Algorithm 2 with the released ECDF of predicted probabilities
// smoothed by pointwise l2 before the quantile search), for the paper's
// allocation ε/(L+9), the joint one-release plan and the grid plan that
// releases only the ROC pair {Label, NotLabel} (package hosmer),
// each with the tree and the k-ary mechanism. Runs whose Ĥ is undefined
// (a released group left without expected negatives) are left out of the
// mean and counted in the figure's notes.
func Fig6(ctx context.Context, cfg Config) (*Figure, error) { return hlFigure(ctx, cfg, "fig6", bank) }

// Fig10 is Fig6 on the Diabetes data (dp-ecdf appendix, Fig. 10).
func Fig10(ctx context.Context, cfg Config) (*Figure, error) {
	return hlFigure(ctx, cfg, "fig10", diabetes)
}

func hlFigure(ctx context.Context, cfg Config, id string, d realData) (*Figure, error) {
	cfg = cfg.withDefaults()
	parties, auc, err := scoredParties(cfg, d)
	if err != nil {
		return nil, err
	}
	h, err := exactHL(parties, cfg.DataBins)
	if err != nil {
		return nil, err
	}
	u, err := newCurator(parties, cfg.DataBins)
	if err != nil {
		return nil, err
	}
	fig := &Figure{ID: id, Title: fmt.Sprintf("Hosmer–Lemeshow relative MSE, %s (n=%d, AUC %.3f, H=%.1f), N=%d", d.name, len(parties), auc, h, cfg.DataBins),
		XLabel: "ε", YLabel: "E[(Ĥ−H)²] / H²", LogX: true, LogY: true, Runs: cfg.Runs}
	g, err := ecdf.NewLinearGrid(0, 1, cfg.DataBins)
	if err != nil {
		return nil, err
	}
	plans := []string{"paper", "joint", "grid"}
	pr := progress{cfg.Progress}
	pr.start(id, len(dataMechanisms)*len(plans)*len(cfg.Epsilons)*cfg.Runs)
	defer pr.finish()
	for _, name := range dataMechanisms {
		for _, plan := range plans {
			series, notes, err := hlSeries(ctx, cfg, u, g, h, len(parties), plan, name, &pr)
			if err != nil {
				return nil, err
			}
			fig.Series, fig.Notes = append(fig.Series, series...), append(fig.Notes, notes...)
		}
	}
	return fig, nil
}

// hlSeries measures one plan with one mechanism at every ε: the raw Ĥ
// and, for the grid plan, the debiased Ĥ (hosmer.Config.Debias) of the
// same releases, so the two series are paired.
func hlSeries(ctx context.Context, cfg Config, u aggregation.UStat, g *ecdf.Grid, h float64, n int,
	planName, name string, pr *progress) ([]Series, []string, error) {
	var series [2]Series
	var notes []string
	variants := 1
	for _, eps := range cfg.Epsilons {
		plan, err := analysis.HosmerPlan(planName, eps, cfg.DataBins, mechanism.Params{Name: name})
		if err != nil {
			return nil, nil, err
		}
		if plan.ExpectedFromGrid {
			variants = 2
		}
		series[0].Name, series[1].Name = plan.Name+" "+name, plan.Name+" "+name+", debiased"
		var mse [2]meanSE
		var undefined [2]int
		for range cfg.Runs {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			hp, err := privateHL(ctx, u, g, plan, n, variants)
			if err != nil {
				return nil, nil, err
			}
			for v := range variants {
				if math.IsNaN(hp[v]) {
					undefined[v]++
				} else {
					mse[v].add((hp[v] - h) * (hp[v] - h) / (h * h))
				}
			}
			pr.add()
		}
		for v := range variants {
			s := &series[v]
			if undefined[v] > 0 {
				notes = append(notes, fmt.Sprintf("%s, ε = %.6g: Ĥ undefined in %d of %d runs (left out)", s.Name, eps, undefined[v], cfg.Runs))
			}
			if mse[v].n > 0 {
				s.X, s.Y, s.StdErr, s.Runs = append(s.X, eps), append(s.Y, mse[v].mean()), append(s.StdErr, mse[v].stderr()), append(s.Runs, mse[v].n)
			}
		}
	}
	return series[:variants], notes, nil
}

// exactHL is the textbook statistic on the grid (groups at the exact
// quantiles of the binned probabilities).
func exactHL(parties []*party.Party, bins int) (float64, error) {
	b, labels, probs := make([]int, len(parties)), make([]int, len(parties)), make([]float64, len(parties))
	for k, p := range parties {
		b[k], labels[k] = p.Bin(), int(p.Payload(core.Label))
		probs[k] = float64(p.Payload(core.Probability)) / core.Probability.Scale()
	}
	res, err := analysis.TrueHosmer(b, labels, probs, bins, 0)
	if err != nil {
		return 0, err
	}
	return res.H, nil
}

// privateHL creates plan's releases on u and returns Algorithm 2's Ĥ on
// them, raw and (when variants is 2) debiased, NaN where the released
// groups leave it undefined.
func privateHL(ctx context.Context, u aggregation.UStat, g *ecdf.Grid, plan *hosmer.Plan, n, variants int) ([2]float64, error) {
	out := [2]float64{math.NaN(), math.NaN()}
	rels, err := plan.Create(ctx, u)
	if err != nil {
		return out, err
	}
	cfg := analysis.HosmerConfig(g.Len(), n, 0)
	for v := range variants {
		cfg.Debias = v == 1
		h, err := analysis.RunHosmer(ctx, u, plan, rels, g, "l2", cfg, analysis.Bootstrap{})
		if err != nil {
			return out, err
		}
		out[v] = h.H
	}
	return out, nil
}
