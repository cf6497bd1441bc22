package analyst

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Hosmer is a private Hosmer–Lemeshow calibration test (dp-ecdf Eq. 5,
// Algorithm 2) released by the two servers: analysis.Hosmer, with the
// dataset, n and the releases. Every field is public configuration or
// post-processing of the plan's releases.
type Hosmer struct {
	Dataset string `json:"dataset"`
	// Normaliser is n, the reports summed: public, as every plan is
	// proved under replace-one only (JSON keys n, n_public).
	ecdf.Normaliser
	Neighbours string `json:"neighbours"`
	Mechanism  string `json:"mechanism"`
	// Releases are the IDs of the releases the query created and the
	// servers charged, in the plan's order; ReleaseSpecs says what each
	// holds.
	Releases  []string `json:"releases"`
	Smoothing string   `json:"smoothing"`
	// Charged is true when the query created the releases and spent
	// their ε; false when it post-processed an existing release.
	Charged bool `json:"charged"`
	// GroupsAsked is Q; Groups has at most Q groups.
	GroupsAsked int `json:"groups_asked"`
	analysis.Hosmer
}

// Hosmer runs the Hosmer–Lemeshow test over the network: it builds the
// named plan (analysis.HosmerPlans; "" is the grid plan) at the manifest's
// per-release ε, creates each of its releases at both servers — the
// ledgers charge exactly the plan's ε — and runs hosmer.Private on them:
// the released ECDF of the scores, smoothed by method (ecdf/smooth, over
// the noise of the counts), cut at its q/groups quantiles, and the
// released counts, Σy and expected positives of each group, with
// expected counts clipped to at least one instance
// (hosmer.Config.MinExpected).
//
// The groups are quantile groups of the grid's score bins, so the test is
// the Hosmer–Lemeshow test only when the grid's score is monotone
// (non-decreasing) in the predicted probability. The grid plan further
// takes each bin's centre as its instances' probability, so it needs the
// score to be the probability itself on a grid within [0, 1]; the joint
// and paper plans read Σp from the Probability component, which every
// party must have sent (fedecdf party --probability, or
// --probability-column); a party that did not counts as p = 0.
//
// All plans are proved under replace-one neighbours (n public; hosmer
// package documentation), so a manifest with another relation is
// refused. The joint plan is proved for pure ε-DP mechanisms only; with
// δ > 0 use the grid or paper plan. Bad arguments are refused before any
// budget is spent. When the noise leaves H undefined (hosmer.ErrUndefined)
// the result says so in Error, with no statistic, and the error is nil.
func (a *Analyst) Hosmer(ctx context.Context, plan, method string, groups, draws int) (*Hosmer, error) {
	params, err := a.m.MechanismParams()
	if err != nil {
		return nil, err
	}
	p, err := HosmerPlan(plan, params, groups, a.grid)
	if err != nil {
		return nil, err
	}
	if _, err := analysis.CheckSmoothing(method, 0, a.grid.Len()); err != nil {
		return nil, err
	}
	rels, err := p.Create(ctx, a.remote)
	if err != nil {
		return nil, fmt.Errorf("%s plan: creating release %d of %d (releases created and charged: %v): %w", p.Name, len(rels)+1, len(p.Releases), releaseIDs(rels), err)
	}
	out, err := a.hosmer(ctx, p, rels, method, groups, draws)
	if out != nil {
		out.Charged = true
	}
	return out, err
}

// HosmerRelease runs the grid plan's Hosmer–Lemeshow test on an existing
// release id of {Label, NotLabel} — the release of a ROC query (fedecdf
// query roc prints its ID) — at no further cost: the servers answer it
// with its fixed noise, and everything after is post-processing. The
// stated ε is the release's own, already spent. The same conditions on
// the grid and the relation as for Hosmer apply.
func (a *Analyst) HosmerRelease(ctx context.Context, id payload.ReleaseID, method string, groups, draws int) (*Hosmer, error) {
	if _, err := analysis.CheckSmoothing(method, 0, a.grid.Len()); err != nil {
		return nil, err
	}
	rel, err := a.remote.OpenRelease(ctx, id, []core.Component{core.Label, core.NotLabel})
	if err != nil {
		return nil, err
	}
	p, err := HosmerPlan("grid", rel.Spec.Mechanism, groups, a.grid)
	if err != nil {
		return nil, fmt.Errorf("release %v: %w", id, err)
	}
	return a.hosmer(ctx, p, []*aggregation.Release{rel}, method, groups, draws)
}

// hosmer runs the plan's test (analysis.RunHosmer) on its releases rels,
// with draws bootstrap draws for the noise-aware p-value
// (hosmer.Plan.NullTest; 0: hosmer.DefaultNullDraws, negative: none),
// their simulated noise seeded by bootstrapSeed from the releases' IDs:
// it simulates the public noise law, so it needs no secret randomness,
// and the same releases give the same p-value at every query.
func (a *Analyst) hosmer(ctx context.Context, p *hosmer.Plan, rels []*aggregation.Release, method string, groups, draws int) (*Hosmer, error) {
	out := &Hosmer{Dataset: a.m.Dataset, Neighbours: mechanism.ReplaceOne.String(), Mechanism: p.CountMechanism(rels[0]).Name(), Releases: releaseIDs(rels), Smoothing: method, GroupsAsked: groups}
	if err := sameReports(rels); err != nil {
		return nil, fmt.Errorf("%s plan: %w", p.Name, err)
	}
	var err error
	if out.Normaliser, err = rels[0].Normaliser(0); err != nil { // replace-one (hosmerPlan): n public
		return nil, fmt.Errorf("%s plan: %w", p.Name, err)
	}
	cfg := analysis.HosmerConfig(a.grid.Len(), int(out.N), groups)
	h, err := analysis.RunHosmer(ctx, a.remote, p, rels, a.grid, method, cfg, analysis.NewBootstrap(draws, bootstrapSeed(rels, method, groups)))
	if err != nil {
		return nil, fmt.Errorf("releases %v: %w", out.Releases, err)
	}
	out.Hosmer = *h
	return out, nil
}

// bootstrapSeed is the seed of the noise-aware p-value's null draws of
// the test of rels smoothed by method in groups groups: the first 8
// bytes of SHA-256 over a domain string, the arguments and the
// releases' IDs, all public. Querying a release again so reproduces its
// p-value instead of drawing another Monte-Carlo estimate of it.
func bootstrapSeed(rels []*aggregation.Release, method string, groups int) uint64 {
	h := sha256.New()
	fmt.Fprintf(h, "fedecdf hosmer bootstrap v1\x00%s\x00%d\x00", method, groups)
	for _, rel := range rels {
		h.Write(rel.ID[:])
	}
	return binary.LittleEndian.Uint64(h.Sum(nil))
}

// releaseIDs are the IDs of rels.
func releaseIDs(rels []*aggregation.Release) []string {
	ids := make([]string, len(rels))
	for k, rel := range rels {
		ids[k] = rel.ID.String()
	}
	return ids
}

// sameReports checks that rels sum one non-empty report set, as the
// groups of one test need.
func sameReports(rels []*aggregation.Release) error {
	for _, rel := range rels {
		if rel.Reports != rels[0].Reports || rel.Reports < 1 {
			return fmt.Errorf("release %v sums %d reports and release %v %d: the groups need one non-empty report set (a party uploaded between the releases? query again once uploads have stopped)", rels[0].ID, rels[0].Reports, rel.ID, rel.Reports)
		}
	}
	return nil
}

// HosmerPlan checks the arguments of Analyst.Hosmer and builds the plan
// at the manifest's per-release ε.
func HosmerPlan(name string, params mechanism.Params, groups int, g *ecdf.Grid) (*hosmer.Plan, error) {
	if params.Relation != mechanism.ReplaceOne {
		return nil, fmt.Errorf("the neighbouring relation is %s: the Hosmer–Lemeshow plans are proved under replace neighbours only (n public)", params.Relation)
	}
	if groups < 3 || groups > params.Bins {
		return nil, fmt.Errorf("number of groups %d: want 3 (one degree of freedom) to the %d bins of the grid", groups, params.Bins)
	}
	if (name == "" || name == "grid") && (g.Min() < 0 || g.Max() > 1) {
		return nil, fmt.Errorf("the grid plan takes the bins' centres as probabilities, but the manifest's grid is [%g, %g], not within [0, 1]: use --plan joint or paper", g.Min(), g.Max())
	}
	return analysis.HosmerPlan(name, params.Epsilon, params.Bins, params)
}
