package hosmer

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/roc"
)

// Run creates the plan's releases on u (charging its ε to u's ledger)
// and runs Private on them with cfg, whose CountFromLabels is taken from
// the plan and whose Centers are set from g when the plan estimates
// expected positives from the grid (GridPlan); g must be the grid of the
// reports' bins, over the predicted probabilities. It returns the
// releases created even when it fails, so the caller can state what was
// spent; an error wrapping ErrUndefined means the releases left H
// undefined (a group without expected negatives), an outcome of the
// noise rather than a fault.
func (p *Plan) Run(ctx context.Context, u aggregation.UStat, g *ecdf.Grid, cfg Config) (*Result, []*aggregation.Release, error) {
	cfg.CountFromLabels = p.CountFromLabels
	cfg.Centers = nil
	if p.ExpectedFromGrid {
		if g == nil || g.Len() != cfg.Bins {
			return nil, nil, fmt.Errorf("hosmer: the %s plan needs the grid of the %d bins", p.Name, cfg.Bins)
		}
		cfg.Centers = BinCenters(g)
	}
	var rels []*aggregation.Release
	for _, spec := range p.Releases {
		rel, err := u.NewRelease(ctx, spec)
		if err != nil {
			return nil, rels, err
		}
		rels = append(rels, rel)
	}
	res, err := Private(roc.UStatSource{Ctx: ctx, UStat: u, Releases: rels}, cfg)
	return res, rels, err
}
