package deploy

import (
	"context"
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/roc"
)

// ROC is a private ROC curve (and the PR curve derived from it) released
// by the two servers: higher score = more likely positive. Every field is
// public configuration or post-processing of one release.
type ROC struct {
	// ReleaseInfo's n is P̂(N) + M̂(N) under add/remove; the curves are
	// normalised by each vector's own released total either way
	// (package roc).
	ReleaseInfo
	Smoothing string `json:"smoothing"`
	// FPR and TPR run from (1, 1) at the lowest threshold to (0, 0).
	FPR []float64 `json:"fpr"`
	TPR []float64 `json:"tpr"`
	AUC float64   `json:"auc"`
	// Recall and Precision are the PR points with at least one predicted
	// positive; AveragePrecision summarises them.
	Recall           []float64 `json:"recall"`
	Precision        []float64 `json:"precision"`
	AveragePrecision float64   `json:"average_precision"`
}

// ROC creates one release of the Label and NotLabel components — the
// positives' and the negatives' prefix counts — and returns the ROC and PR
// curves, each count vector smoothed by method (ecdf/smooth). Under
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
var rocComponents = []aggregation.Component{aggregation.Label, aggregation.NotLabel}

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
	params := rel.Spec.Mechanism
	mech := rel.Mechanism(aggregation.Label)
	smoother := func(f []float64) ([]float64, error) { return smooth.Apply(method, f, mech) }
	src := roc.UStatSource{Ctx: ctx, UStat: a.remote, Releases: []*aggregation.Release{rel}}
	c, err := roc.Private(src, a.grid.Len(), smoother)
	if err != nil {
		return nil, fmt.Errorf("release %v: %w", rel.ID, err)
	}
	total, err := rel.Normaliser(int64(math.Round(c.Positives + c.Negatives)))
	if err != nil {
		return nil, fmt.Errorf("release %v: %w", rel.ID, err)
	}
	pr := c.PR(0)
	g := fmt.Sprintf("(ε=%g, δ=%g)-DP under %s neighbours for the pair of count vectors (%s mechanism); each of the %d servers adds its own full-scale noise, at %d× the mechanism's variance",
		params.Epsilon, params.Delta, params.Relation, mech.Name(), servers, servers)
	return &ROC{
		ReleaseInfo: a.releaseInfo(rel.ID, total, params, mech, g),
		Smoothing:   method,
		FPR:         c.FPR, TPR: c.TPR, AUC: c.AUC(),
		Recall: pr.Recall, Precision: pr.Precision, AveragePrecision: pr.AveragePrecision(),
	}, nil
}
