package analyst

import (
	"context"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// ROC is a private ROC curve (and the PR curve derived from it) released
// by the two servers (analysis.ROC), with the release it came from.
type ROC struct {
	Stored
	*analysis.ROC
}

// ROC creates one release of the Label and NotLabel components — the
// positives' and the negatives' prefix counts — and returns the ROC and PR
// curves, each count vector smoothed by method (ecdf/smooth). The
// manifest's mechanism "auto" becomes the partitioned release where the
// policy allows it and analysis.ROCParams finds it less noisy at the
// grid's ends. Under
// replace-one the pair is ε-DP at the manifest's ε (roc/doc.go: a replaced
// instance moves within one vector, or leaves one and joins the other, each
// an add/remove at ε/2), and that is what the servers' ledgers charge
// (payload.PrivacyUnits). Under add/remove it is ε-DP as well (an added
// instance joins exactly one vector, each noised at ε), and the analyst
// is told no n: ROC.N is the noisy total of the pair.
func (a *Analyst) ROC(ctx context.Context, method string) (*ROC, error) {
	params, err := a.m.MechanismParams()
	if err != nil {
		return nil, err
	}
	policy, err := a.m.Policy()
	if err != nil {
		return nil, err
	}
	params = analysis.ROCParams(params, policy.Allow)
	if _, err := analysis.CheckSmoothing(method, 0, params.Bins); err != nil {
		return nil, err // before the release: a bad method must not cost budget
	}
	rel, err := a.remote.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: params, Components: rocComponents})
	if err != nil {
		return nil, err
	}
	r, err := a.roc(ctx, rel, method)
	if r != nil {
		r.Charged = true
	}
	return r, err
}

// rocComponents are the components of a ROC release: the positives' and
// the negatives' prefix counts.
var rocComponents = []core.Component{core.Label, core.NotLabel}

// ROCRelease reads the ROC and PR curves of an existing ROC release id
// again, at no cost: the servers answer with its fixed noise, and the
// mechanism and ε are the ones the servers recorded for it.
func (a *Analyst) ROCRelease(ctx context.Context, id payload.ReleaseID, method string) (*ROC, error) {
	rel, err := a.remote.OpenRelease(ctx, id, rocComponents)
	if err != nil {
		return nil, err
	}
	return a.roc(ctx, rel, method)
}

// roc computes the curves of the ROC release rel.
func (a *Analyst) roc(ctx context.Context, rel *aggregation.Release, method string) (*ROC, error) {
	r, err := analysis.QueryROC(ctx, a.remote, rel, analysis.AllPrefixes(a.grid.Len()), method, a.draws)
	if err != nil {
		return nil, err
	}
	r.SetThresholds(a.grid)
	return &ROC{Stored: a.stored(rel.ID), ROC: r}, nil
}
