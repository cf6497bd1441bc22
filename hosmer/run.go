package hosmer

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/roc"
)

// Configure returns cfg completed for the plan's releases: its
// CountFromLabels, and for a plan that estimates expected positives from
// the grid (GridPlan) the Centers of g, which must be the grid of the
// reports' bins, over the predicted probabilities.
func (p *Plan) Configure(g *ecdf.Grid, cfg Config) (Config, error) {
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
		return rel.Mechanism(aggregation.Label)
	}
	return rel.Mechanism(aggregation.Count)
}

// Smoother returns the smoothing of the released ECDF of probabilities
// by method (ecdf/smooth.Apply: none, l1, l2 or tree-l2, the last over the
// terms of CountMechanism(rel)), or nil for "none".
func (p *Plan) Smoother(method string, rel *aggregation.Release) Smoother {
	if method == "none" {
		return nil
	}
	m := p.CountMechanism(rel)
	return func(f []float64) ([]float64, error) { return smooth.Apply(method, f, m) }
}

// Run creates the plan's releases on u (charging its ε to u's ledger)
// and runs Private on them with cfg completed by Configure. It returns
// the releases created even when it fails, so the caller can state what
// was spent; an error wrapping ErrUndefined means the releases left H
// undefined (a group without expected negatives), an outcome of the
// noise rather than a fault.
func (p *Plan) Run(ctx context.Context, u aggregation.UStat, g *ecdf.Grid, cfg Config) (*Result, []*aggregation.Release, error) {
	cfg, err := p.Configure(g, cfg)
	if err != nil {
		return nil, nil, err
	}
	rels, err := p.Create(ctx, u)
	if err != nil {
		return nil, rels, err
	}
	res, err := Private(roc.UStatSource{Ctx: ctx, UStat: u, Releases: rels}, cfg)
	return res, rels, err
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
