package deploy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/roc"
)

// HosmerPlans are the allocations Analyst.Hosmer accepts, the default
// first: hosmer.JointPlan (one release of {Label, NotLabel, Probability})
// and hosmer.PaperPlan (dp-ecdf Algorithm 2's own split).
var HosmerPlans = []string{"joint", "paper"}

// hosmerMinExpected clips every released expected count of a group to at
// least one instance (hosmer.Config.MinExpected), as fedecdf simulate
// does: post-processing that keeps H finite when noise drives a small
// E_1 or E_0 to 0 or below.
const hosmerMinExpected = 1

// Hosmer is a private Hosmer–Lemeshow calibration test (dp-ecdf Eq. 5,
// Algorithm 2) released by the two servers. Every field is public
// configuration or post-processing of the plan's releases.
type Hosmer struct {
	Dataset string  `json:"dataset"`
	N       int     `json:"n"` // reports summed (public under replace-one)
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Plan names the allocation of ε over the releases (HosmerPlans).
	Plan      string `json:"plan"`
	Mechanism string `json:"mechanism"`
	Guarantee string `json:"guarantee"`
	// Releases are the IDs of the releases the query created and the
	// servers charged, in the plan's order; ReleaseSpecs says what each
	// holds.
	Releases     []string `json:"releases"`
	ReleaseSpecs []string `json:"release_specs"`
	Smoothing    string   `json:"smoothing"`
	// GroupsAsked is Q; Groups has at most Q groups (quantiles falling in
	// one bin are merged, hosmer.Boundaries).
	GroupsAsked int           `json:"groups_asked"`
	Groups      []HosmerGroup `json:"groups"`
	// Statistic is H and PValue P(χ²_{G−2} ≥ H); PValue is null with
	// fewer than 3 groups, and both are null when Error is set.
	Statistic *float64 `json:"statistic"`
	PValue    *float64 `json:"p_value"`
	// Error says why the noise left H undefined (a released group too
	// small to have positive expected positives and negatives); the
	// releases are spent all the same.
	Error string `json:"error,omitempty"`
}

// HosmerGroup is one released group: grid bins FirstBin..LastBin, its
// size and its observed (Σy) and expected (Σp) positives, after the
// clipping of hosmer.Private.
type HosmerGroup struct {
	FirstBin int     `json:"first_bin"`
	LastBin  int     `json:"last_bin"`
	Size     float64 `json:"size"`
	Observed float64 `json:"observed"`
	Expected float64 `json:"expected"`
}

// Hosmer runs the Hosmer–Lemeshow test over the network: it builds the
// named plan (hosmer.JointPlan, "joint" or "", the default, or
// hosmer.PaperPlan, "paper") at the manifest's per-release ε, creates
// each of its releases at both servers — the ledgers charge exactly the
// plan's ε — and runs hosmer.Private on them: the released ECDF of the
// scores, smoothed by method (ecdf/smooth, over the noise of the count
// component), cut at its q/groups quantiles, and the released counts, Σy
// and Σp of each group, with expected counts clipped to at least one
// instance (hosmer.Config.MinExpected).
//
// The groups are quantile groups of the grid's score bins, so the test is
// the Hosmer–Lemeshow test only when the grid's score is monotone
// (non-decreasing) in the predicted probability — the score is the
// probability itself, or a monotone transform such as its logit. The
// expected positives are the sums of the Probability component: every
// party must have sent its predicted probability (fedecdf party
// --probability, or --probability-column); a party that did not counts
// as p = 0, which no noise-free check can tell apart.
//
// Both plans are proved under replace-one neighbours (n public; hosmer
// package documentation), so a manifest with another relation is
// refused. The joint plan is proved for pure ε-DP mechanisms only; with
// δ > 0 use the paper plan. Bad arguments are refused before any budget
// is spent. When the noise leaves H undefined (hosmer.ErrUndefined) the
// result says so in Error, with no statistic, and the error is nil.
func (a *Analyst) Hosmer(ctx context.Context, plan, method string, groups int) (*Hosmer, error) {
	params, err := a.m.MechanismParams()
	if err != nil {
		return nil, err
	}
	p, err := hosmerPlan(plan, params, groups)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(smooth.Methods, method) {
		return nil, fmt.Errorf("smoothing method %q is unknown (valid: %s)", method, strings.Join(smooth.Methods, ", "))
	}
	countMech, err := hosmerCountMechanism(p)
	if err != nil {
		return nil, err
	}
	cfg := hosmer.Config{Bins: a.grid.Len(), Groups: groups, MinExpected: hosmerMinExpected}
	if method != "none" {
		cfg.Smooth = func(f []float64) ([]float64, error) { return smooth.Apply(method, f, countMech) }
	}
	rels, err := p.Create(ctx, a.remote)
	out := &Hosmer{Dataset: a.m.Dataset, Epsilon: p.Epsilon, Plan: p.Name, Mechanism: countMech.Name(), Smoothing: method, GroupsAsked: groups}
	out.record(p, rels)
	if err != nil {
		return nil, fmt.Errorf("%s plan: creating release %d of %d (releases created and charged: %v): %w", p.Name, len(rels)+1, len(p.Releases), out.Releases, err)
	}
	out.N = rels[0].Reports
	out.Guarantee = fmt.Sprintf("(ε=%g, δ=%g)-DP under replace-one neighbours (n public) for all %d release(s) of the %s plan together, which is what each server's ledger charged; each of the %d servers adds its own full-scale noise, so the output stays private against one corrupt server, at %d× the mechanism's variance",
		out.Epsilon, out.Delta, len(rels), p.Name, servers, servers)
	if err := sameReports(rels); err != nil {
		return nil, fmt.Errorf("%s plan: %w", p.Name, err)
	}
	cfg.Reports = out.N
	if cfg, err = p.Configure(a.grid, cfg); err != nil {
		return nil, err
	}
	res, err := hosmer.Private(roc.UStatSource{Ctx: ctx, UStat: a.remote, Releases: rels}, cfg)
	switch {
	case errors.Is(err, hosmer.ErrUndefined):
		out.Error = err.Error()
	case err != nil:
		return nil, fmt.Errorf("releases %v: %w", out.Releases, err)
	default:
		out.Statistic, out.PValue = finite(res.H), finite(res.PValue)
		out.Groups = hosmerGroups(res.Groups)
	}
	return out, nil
}

// record states what the plan's releases rels (all, or those created
// before an error) are and what they cost.
func (h *Hosmer) record(p *hosmer.Plan, rels []*aggregation.Release) {
	for k, rel := range rels {
		h.Delta += rel.Delta()
		h.Releases = append(h.Releases, rel.ID.String())
		h.ReleaseSpecs = append(h.ReleaseSpecs, fmt.Sprintf("%v at ε=%.4g per privacy unit: %s", p.Releases[k].Components, p.Releases[k].Mechanism.Epsilon, rel.Guarantee()))
	}
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

// hosmerPlan checks the arguments of Analyst.Hosmer and builds the plan
// at the manifest's per-release ε.
func hosmerPlan(name string, params mechanism.Params, groups int) (*hosmer.Plan, error) {
	if params.Relation != mechanism.ReplaceOne {
		return nil, fmt.Errorf("the manifest's neighbouring relation is %s: the Hosmer–Lemeshow plans are proved under replace-one only (n public)", params.Relation)
	}
	if groups < 3 || groups > params.Bins {
		return nil, fmt.Errorf("number of groups %d: want 3 (one degree of freedom) to the %d bins of the grid", groups, params.Bins)
	}
	switch name {
	case "", "joint":
		p, err := hosmer.JointPlan(params.Epsilon, params.Bins, params)
		if err != nil && params.Delta != 0 {
			return nil, fmt.Errorf("%w; the manifest's %s mechanism has δ = %g: use the paper plan (--plan paper)", err, params.Name, params.Delta)
		}
		return p, err
	case "paper":
		return hosmer.PaperPlan(params.Epsilon, params.Bins, params)
	}
	return nil, fmt.Errorf("Hosmer–Lemeshow plan %q is unknown (valid: %s)", name, strings.Join(HosmerPlans, ", "))
}

// hosmerCountMechanism returns the mechanism whose noise the released
// counts carry, for the smoother: the Count component of the first
// release, or Label when counts are Label + NotLabel (two independent
// draws of one noise pattern).
func hosmerCountMechanism(p *hosmer.Plan) (mechanism.Mechanism, error) {
	c := aggregation.Count
	if p.CountFromLabels {
		c = aggregation.Label
	}
	return protocol.ComponentMechanism(p.Releases[0].Mechanism, c)
}

// hosmerGroups converts released groups to their JSON form.
func hosmerGroups(groups []hosmer.Group) []HosmerGroup {
	out := make([]HosmerGroup, len(groups))
	for k, g := range groups {
		out[k] = HosmerGroup{FirstBin: g.First, LastBin: g.Last, Size: g.Size, Observed: g.Positives, Expected: g.Expected}
	}
	return out
}

// finite returns &v, or nil (JSON null, which unlike NaN JSON can
// encode) when v is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
