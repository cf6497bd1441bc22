package hosmer

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/roc"
)

// configure returns cfg completed for the plan's releases: its
// CountFromLabels, and for a plan that estimates expected positives from
// the grid (GridPlan) the Centers of g, which must be the grid of the
// reports' bins, over the predicted probabilities.
func (p *Plan) configure(g *ecdf.Grid, cfg Config) (Config, error) {
	cfg.CountFromLabels = p.CountFromLabels
	cfg.Centers = nil
	if p.ExpectedFromGrid {
		if g == nil || g.Len() != cfg.Bins {
			return cfg, fmt.Errorf("hosmer: the %s plan needs the grid of the %d bins", p.Name, cfg.Bins)
		}
		cfg.Centers = BinCenters(g)
	}
	return cfg, nil
}

// CountMechanism returns the mechanism whose noise the released counts
// of the plan carry, from its first release rel — its Count component,
// or Label when the counts are Label + NotLabel (two independent draws
// of one noise pattern) — for smoothing over the noise's terms.
func (p *Plan) CountMechanism(rel *aggregation.Release) mechanism.Mechanism {
	if p.CountFromLabels {
		return rel.Mechanism(core.Label)
	}
	return rel.Mechanism(core.Count)
}

// smoother returns the smoothing of the released ECDF of probabilities
// by method (ecdf/smooth.Apply: none, l1, l2 or tree-l2, the last over the
// terms of CountMechanism(rel)), or nil for "none".
func (p *Plan) smoother(method string, rel *aggregation.Release) roc.Smoother {
	if method == "none" {
		return nil
	}
	m := p.CountMechanism(rel)
	return func(f []float64) ([]float64, error) { return smooth.Apply(method, f, m) }
}

// Evaluate runs Private on the plan's releases rels (Create, or an
// existing release of the same spec, such as a ROC release for
// GridPlan) through u, with cfg completed by configure for grid g and the
// released ECDF smoothed by method (smoother). An error wrapping
// ErrUndefined means the releases left H undefined (a group without
// expected negatives), an outcome of the noise rather than a fault.
func (p *Plan) Evaluate(ctx context.Context, u aggregation.UStat, rels []*aggregation.Release, g *ecdf.Grid, method string, cfg Config) (*Result, error) {
	if len(rels) != len(p.Releases) {
		return nil, fmt.Errorf("hosmer: the %s plan has %d release(s), got %d", p.Name, len(p.Releases), len(rels))
	}
	return p.evaluate(roc.UStatSource{Ctx: ctx, UStat: u, Releases: rels}, rels, g, method, cfg)
}

// evaluate is Evaluate on any source of the releases' prefix sums: the
// released ones, or NullTest's simulated ones.
func (p *Plan) evaluate(src roc.Source, rels []*aggregation.Release, g *ecdf.Grid, method string, cfg Config) (*Result, error) {
	cfg, err := p.configure(g, cfg)
	if err != nil {
		return nil, err
	}
	cfg.Smooth = p.smoother(method, rels[0])
	return Private(src, cfg)
}

// Create creates the plan's releases on u, charging its ε to u's ledger,
// and returns those created (all of them, or those before the error).
func (p *Plan) Create(ctx context.Context, u aggregation.UStat) ([]*aggregation.Release, error) {
	var rels []*aggregation.Release
	for _, spec := range p.Releases {
		rel, err := u.NewRelease(ctx, spec)
		if err != nil {
			return rels, err
		}
		rels = append(rels, rel)
	}
	return rels, nil
}
