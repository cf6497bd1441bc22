package experiment

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/party"
)

// dataMechanisms are the mechanisms of the real-data figures: the
// paper's tree and the k-ary tree with subtraction (pure ε-DP, as the
// joint Hosmer–Lemeshow plan requires).
var dataMechanisms = []string{"tree", "kary"}

// rocVariant is one way of releasing the ROC pair at a total ε: a
// mechanism, and the spec ε of the {Label, NotLabel} release as a
// fraction of the total.
type rocVariant struct {
	mechanism string
	share     float64
	note      string
}

// rocVariants are Fig. 5's series: the paper's composition (each vector
// at ε/2, dp-ecdf §5.1) on its tree, and the pair released at spec ε,
// which is ε-DP as well (payload.PrivacyUnits, roc/doc.go), on the tree
// and the k-ary tree.
var rocVariants = []rocVariant{
	{"tree", 0.5, "ε/2 each (paper)"},
	{"tree", 1, "pair at ε"},
	{"kary", 1, "pair at ε"},
}

// Fig5 reproduces dp-ecdf Fig. 5 (§6.5) on the Bank data: for each ε
// and smoothing method (p = 1, p = 2 pointwise, p = 2 over the noise
// nodes), the mean over runs of the area between the true ROC curve and
// the smoothed private one, ∫|ROC − ROĈ| dFPR (roc.AreaError). Each run
// releases the positives' and negatives' prefix vectors under one of
// rocVariants, every one ε-DP in all under replace-one. A released class
// total below one instance is raised to 1 (analysis.ClampTotals,
// post-processing) so that every run gives a curve.
func Fig5(ctx context.Context, cfg Config) (*Figure, error) {
	cfg = cfg.withDefaults()
	parties, auc, err := scoredParties(cfg, bank)
	if err != nil {
		return nil, err
	}
	exact, err := exactROC(parties, cfg.DataBins)
	if err != nil {
		return nil, err
	}
	u, err := newCurator(parties, cfg.DataBins)
	if err != nil {
		return nil, err
	}
	fig := &Figure{ID: "fig5", Title: fmt.Sprintf("ROC curve error, Bank (n=%d test rows, AUC %.3f), N=%d", len(parties), auc, cfg.DataBins),
		XLabel: "ε", YLabel: "area between true and private ROC", LogX: true, LogY: true, Runs: cfg.Runs}
	pr := progress{cfg.Progress}
	pr.start("fig5", len(rocVariants)*len(cfg.Epsilons)*cfg.Runs)
	defer pr.finish()
	for _, v := range rocVariants {
		series := make([]Series, len(smoothingMethods))
		for _, eps := range cfg.Epsilons {
			spec := aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: v.mechanism, Bins: cfg.DataBins, Epsilon: eps * v.share}, Components: []core.Component{core.Label, core.NotLabel}}
			errs := make([]meanSE, len(smoothingMethods))
			var label string
			for range cfg.Runs {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				rel, err := u.NewRelease(ctx, spec)
				if err != nil {
					return nil, err
				}
				m := rel.Mechanism(core.Label)
				label = seriesName(v.mechanism, m) + ", " + v.note
				areas, err := rocAreaErrors(ctx, u, rel, exact)
				if err != nil {
					return nil, fmt.Errorf("ε = %g: %w", eps, err)
				}
				for k, a := range areas {
					errs[k].add(a)
				}
				pr.add()
			}
			for k, method := range smoothingMethods {
				s := &series[k]
				s.Name = method + " " + label
				s.X, s.Y, s.StdErr = append(s.X, eps), append(s.Y, errs[k].mean()), append(s.StdErr, errs[k].stderr())
			}
		}
		fig.Series = append(fig.Series, series...)
	}
	return fig, nil
}

// exactROC is the true ROC curve of the parties on the grid.
func exactROC(parties []*party.Party, bins int) (analysis.Curve, error) {
	b, labels := make([]int, len(parties)), make([]int, len(parties))
	for k, p := range parties {
		b[k], labels[k] = p.Bin(), int(p.Payload(core.Label))
	}
	return analysis.TrueROC(b, labels, bins, analysis.AllPrefixes(bins))
}

// rocAreaErrors reads the ROC release rel at every bin and returns, for
// each smoothing method, the area between exact and the smoothed private
// ROC curve (analysis.NewROC: class totals clamped by its one rule),
// without its intervals (the figure does not show them).
func rocAreaErrors(ctx context.Context, u aggregation.UStat, rel *aggregation.Release, exact analysis.Curve) ([]float64, error) {
	areas := make([]float64, len(smoothingMethods))
	for k, method := range smoothingMethods {
		r, err := analysis.QueryROC(ctx, u, rel, analysis.AllPrefixes(rel.Spec.Mechanism.Bins), method, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if areas[k], err = r.AreaError(exact); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
	}
	return areas, nil
}

// isNoData reports whether err says an experiment's data set is absent.
func isNoData(err error) bool { return errors.Is(err, errNoData) }
