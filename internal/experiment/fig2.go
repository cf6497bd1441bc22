package experiment

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/plot"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// smoothingMethods are the smoothings compared in Figs 2, 3 and 7:
// dp-ecdf Eq. 3 with p = 1 and p = 2 pointwise, and p = 2 over the
// release mechanism's noise nodes (package ecdf/smooth).
var smoothingMethods = []string{"l1", "l2", "tree-l2"}

// Fig2 reproduces dp-ecdf Fig. 2 (§6.3) for the paper's tree mechanism:
// for each ε and smoothing method, the mean over runs of
//
//	‖F − F́‖² / ‖F − F̂‖²
//
// on X_pois(λ) (F exact, F̂ a fresh release, F́ its smoothing). Below 1,
// smoothing reduced the DP error. A release equal to F counts as 1
// (smoothing leaves a feasible curve unchanged).
func Fig2(ctx context.Context, cfg Config) (*Figure, error) {
	return smoothingVsEpsilon("fig2", "tree")(ctx, cfg)
}

// smoothingVsEpsilon returns the Fig. 2 experiment for mechanism name
// (tree-l2 then follows that mechanism's noise terms).
func smoothingVsEpsilon(id, name string) func(context.Context, Config) (*Figure, error) {
	return func(ctx context.Context, cfg Config) (*Figure, error) {
		cfg = cfg.withDefaults()
		hist, err := synthetic.PoissonHistogram(cfg.Lambda, cfg.Bins, cfg.Seed)
		if err != nil {
			return nil, err
		}
		pr := progress{cfg.Progress}
		pr.start(id, len(cfg.Epsilons)*cfg.Runs)
		defer pr.finish()
		fig := newRatioFigure(id, "ε", cfg.Runs)
		var label string
		for _, eps := range cfg.Epsilons {
			m, err := newMechanism(name, cfg.Bins, eps, cfg.Delta)
			if err != nil {
				return nil, err
			}
			label = seriesName(name, m)
			if err := addRatios(ctx, fig, eps, hist, m, cfg.Runs, pr); err != nil {
				return nil, err
			}
		}
		fig.Title = fmt.Sprintf("Effect of smoothing on the DP error, %s, X_pois(λ=%g), N=%d", label, cfg.Lambda, cfg.Bins)
		return fig, nil
	}
}

// Fig3 reproduces dp-ecdf Fig. 3: the ratio of Fig. 2 against λ of
// X_pois(λ) at ε = 1, tree mechanism.
func Fig3(ctx context.Context, cfg Config) (*Figure, error) {
	cfg = cfg.withDefaults()
	m, err := newMechanism("tree", cfg.Bins, 1, cfg.Delta)
	if err != nil {
		return nil, err
	}
	pr := progress{cfg.Progress}
	pr.start("fig3", len(cfg.Lambdas)*cfg.Runs)
	defer pr.finish()
	fig := newRatioFigure("fig3", "λ", cfg.Runs)
	fig.Title = fmt.Sprintf("Effect of smoothing on the DP error, tree, ε=1, N=%d", cfg.Bins)
	for _, lambda := range cfg.Lambdas {
		hist, err := synthetic.PoissonHistogram(lambda, cfg.Bins, cfg.Seed)
		if err != nil {
			return nil, err
		}
		if err := addRatios(ctx, fig, lambda, hist, m, cfg.Runs, pr); err != nil {
			return nil, err
		}
	}
	return fig, nil
}

// newRatioFigure is an empty Fig. 2/3 figure: one series per smoothing
// method and the no-effect line y = 1.
func newRatioFigure(id, xLabel string, runs int) *Figure {
	fig := &Figure{ID: id, XLabel: xLabel, YLabel: "‖F−F́‖² / ‖F−F̂‖²", LogX: true, Runs: runs, Legend: plot.BottomRight}
	for _, method := range smoothingMethods {
		fig.Series = append(fig.Series, Series{Name: method})
	}
	fig.Series = append(fig.Series, Series{Name: "no effect", Dashed: true})
	return fig
}

// addRatios appends to fig's series the point x: the mean ratio of each
// smoothing method over runs fresh releases of m on hist.
func addRatios(ctx context.Context, fig *Figure, x float64, hist []int64, m mechanism.Mechanism, runs int, pr progress) error {
	truth := ecdf.ECDF(hist)
	ratios := make([]meanSE, len(smoothingMethods))
	for range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := release(m, hist)
		if err != nil {
			return err
		}
		raw := p.Curve()
		base := meanSquaredDiff(raw, truth)
		for k, method := range smoothingMethods {
			g, err := smooth.Apply(method, raw, m)
			if err != nil {
				return err
			}
			r := 1.0 // F̂ = F is feasible: every method returns it
			if base > 0 {
				r = meanSquaredDiff(g, truth) / base
			}
			ratios[k].add(r)
		}
		pr.add()
	}
	for k := range ratios {
		s := &fig.Series[k]
		s.X, s.Y, s.StdErr = append(s.X, x), append(s.Y, ratios[k].mean()), append(s.StdErr, ratios[k].stderr())
	}
	one := &fig.Series[len(smoothingMethods)]
	one.X, one.Y = append(one.X, x), append(one.Y, 1)
	return nil
}
