package simulate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/party"
)

// HosmerReport is the Hosmer–Lemeshow test (dp-ecdf Eq. 5, Algorithm 2)
// on the parties' predicted probabilities, exact and private. The
// top-level private statistic is that of the first allocation. When the
// test is undefined on the data itself (Undefined says why), the true and
// private statistics are null and no allocation runs.
type HosmerReport struct {
	Groups           int      `json:"groups"`
	Undefined        string   `json:"undefined,omitempty"`
	StatisticTrue    *float64 `json:"statistic_true"`
	PValueTrue       *float64 `json:"p_value_true"`
	StatisticPrivate *float64 `json:"statistic_private"`
	// PValuePrivate is the noise-aware p-value of the first allocation
	// (analysis.Hosmer.PValuePrivate), PValueSE its Monte-Carlo standard
	// error, PValueNaive the χ² one that ignores the noise.
	PValuePrivate  *float64           `json:"p_value_private"`
	PValueSE       *float64           `json:"p_value_private_se"`
	PValueNaive    *float64           `json:"p_value_naive"`
	BootstrapDraws int                `json:"bootstrap_draws"`
	True           []hosmer.Group     `json:"true_groups"`
	Allocations    []HosmerAllocation `json:"allocations"`
}

// HosmerAllocation is one private run of Algorithm 2 under one way of
// spending its ε: analysis.Hosmer of the plan's releases, or of the ROC/PR
// release post-processed (Plan "roc", no ε of its own). Its Epsilon is
// the proved replace-one guarantee of the plan's releases, which is what
// the servers' ledgers charged.
type HosmerAllocation struct {
	analysis.Hosmer
}

// hosmerROC names the allocation that reuses the ROC/PR release: the
// grid plan (hosmer.GridPlan) is exactly that release, so the test is
// post-processing and costs no ε of its own.
const hosmerROC = "roc"

// hosmerPlans builds the plans named in cfg.HosmerPlans other than
// hosmerROC, each with an equal share of ε_HL = cfg.Epsilon·cfg.HosmerShare,
// and reports whether hosmerROC is named.
func hosmerPlans(cfg Config) (plans []*hosmer.Plan, fromROC bool, err error) {
	var names []string
	for _, name := range cfg.HosmerPlans {
		switch {
		case name == hosmerROC:
			fromROC = true
		case slices.Contains(analysis.HosmerPlans, name):
			names = append(names, name)
		default:
			return nil, false, fmt.Errorf("Hosmer–Lemeshow allocation %q is unknown (valid: %s, %s)", name, hosmerROC, strings.Join(analysis.HosmerPlans, ", "))
		}
	}
	switch {
	case cfg.HosmerShare > 0 && len(names) == 0:
		return nil, false, fmt.Errorf("Hosmer–Lemeshow share %g of ε but no allocation that spends it (grid, joint or paper; roc is free)", cfg.HosmerShare)
	case cfg.HosmerShare == 0 && len(names) > 0:
		return nil, false, fmt.Errorf("Hosmer–Lemeshow allocations %v need a share of ε (--hosmer-share); roc alone is free", names)
	}
	if len(names) > 0 && cfg.Neighbours != mechanism.ReplaceOne {
		return nil, false, fmt.Errorf("Hosmer–Lemeshow allocations %v are proved under replace neighbours only (n public), not %s: drop them (roc, post-processing of the ROC/PR release, runs under either)", names, cfg.Neighbours)
	}
	template := mechanism.Params{Name: cfg.Mechanism, Delta: cfg.Delta}
	for _, name := range names {
		eps := cfg.Epsilon * cfg.HosmerShare / float64(len(names))
		p, err := analysis.HosmerPlan(name, eps, cfg.Bins, template)
		if err != nil {
			return nil, false, err
		}
		plans = append(plans, p)
	}
	return plans, fromROC, nil
}

// hosmerReport runs Algorithm 2 on the ROC release when fromROC, then
// under each plan (creating its releases on u), and computes the exact
// statistic on the same grid g of probabilities. n is the ROC release's
// normaliser: the public number of parties under replace-one (the only
// relation of the plans), the noisy total of the pair under add/remove.
func hosmerReport(ctx context.Context, u aggregation.UStat, g *ecdf.Grid, plans []*hosmer.Plan, rocRel *aggregation.Release, method string, parties []*party.Party, probs []float64, n ecdf.Normaliser, boot analysis.Bootstrap) (*HosmerReport, error) {
	pBins, labels := make([]int, len(parties)), make([]int, len(parties))
	for k, p := range parties {
		pBins[k], labels[k] = p.Bin(), int(p.Payload(core.Label))
	}
	base := analysis.HosmerConfig(g.Len(), int(n.N), 0)
	exact, err := analysis.TrueHosmer(pBins, labels, probs[:len(parties)], g.Len(), 0)
	switch {
	case errors.Is(err, hosmer.ErrUndefined):
		why := err.Error()
		why = why[strings.LastIndex(why, "undefined: ")+len("undefined: "):]
		return &HosmerReport{Groups: base.Groups, Undefined: fmt.Sprintf("%d parties are too few for %d groups: %s; use more parties", len(parties), base.Groups, why)}, nil
	case err != nil:
		return nil, err
	case len(exact.Groups) < 3:
		return &HosmerReport{Groups: base.Groups, True: exact.Groups, Undefined: fmt.Sprintf(
			"on %d bin(s) the %d quantile groups merge into %d, and the test needs at least 3 (χ² with G − 2 degrees of freedom); use more bins",
			g.Len(), base.Groups, len(exact.Groups))}, nil
	}
	h, pTrue := exact.Finite()
	r := &HosmerReport{Groups: base.Groups, StatisticTrue: h, PValueTrue: pTrue, True: exact.Groups}
	if rocRel != nil {
		a, err := rocHosmer(ctx, u, g, rocRel, method, base, boot)
		if err != nil {
			return nil, fmt.Errorf("Hosmer–Lemeshow on the ROC release: %w", err)
		}
		r.Allocations = append(r.Allocations, *a)
	}
	for _, plan := range plans {
		boot.Seed++ // each allocation's null noise its own
		a, err := privateHosmer(ctx, u, g, plan, method, base, boot)
		if err != nil {
			return nil, fmt.Errorf("Hosmer–Lemeshow, %s allocation: %w", plan.Name, err)
		}
		r.Allocations = append(r.Allocations, *a)
	}
	if len(r.Allocations) > 0 {
		a := r.Allocations[0]
		r.StatisticPrivate, r.PValuePrivate, r.PValueSE, r.PValueNaive, r.BootstrapDraws = a.Statistic, a.PValuePrivate, a.PValueSE, a.PValueNaive, a.BootstrapDraws
	}
	return r, nil
}

// rocHosmer runs the grid plan's Algorithm 2 on the ROC/PR release
// itself ({Label, NotLabel} over the same grid): post-processing, no ε.
func rocHosmer(ctx context.Context, u aggregation.UStat, g *ecdf.Grid, rocRel *aggregation.Release, method string, base hosmer.Config, boot analysis.Bootstrap) (*HosmerAllocation, error) {
	plan, err := analysis.HosmerPlan("grid", rocRel.Spec.Mechanism.Epsilon, g.Len(), rocRel.Spec.Mechanism)
	if err != nil {
		return nil, err
	}
	h, err := analysis.RunHosmer(ctx, u, plan, []*aggregation.Release{rocRel}, g, method, base, boot)
	if err != nil {
		return nil, err
	}
	h.Plan, h.Epsilon, h.Delta = hosmerROC, 0, 0
	h.Guarantee = "post-processing of the ROC/PR release (no ε of its own)"
	h.ReleaseSpecs = []string{"the ROC/PR release, post-processed (grid plan: counts and E_1 = Σ counts × bin centre)"}
	return &HosmerAllocation{*h}, nil
}

// privateHosmer creates plan's releases on u and runs Algorithm 2 on
// them, smoothing the released ECDF of probabilities with method.
func privateHosmer(ctx context.Context, u aggregation.UStat, g *ecdf.Grid, plan *hosmer.Plan, method string, base hosmer.Config, boot analysis.Bootstrap) (*HosmerAllocation, error) {
	rels, err := plan.Create(ctx, u)
	if err != nil {
		return nil, err
	}
	h, err := analysis.RunHosmer(ctx, u, plan, rels, g, method, base, boot)
	if err != nil {
		return nil, err
	}
	return &HosmerAllocation{*h}, nil
}

// describe names the allocation and what it spent.
func (a *HosmerAllocation) describe() string {
	if a.Plan == hosmerROC {
		return "roc allocation: post-processing of the ROC/PR release (no ε of its own)"
	}
	return fmt.Sprintf("%s allocation: (ε=%.6g, δ=%.6g) under replace neighbours", a.Plan, a.Epsilon, a.Delta)
}

// label is a short name of the allocation for plot legends.
func (a *HosmerAllocation) label() string {
	if a.Plan == hosmerROC {
		return "from the ROC release"
	}
	return fmt.Sprintf("%s, ε %.3g", a.Plan, a.Epsilon)
}

// withoutProbability refuses Hosmer–Lemeshow plans that release the
// probability component, which the additive backend's verified reports
// (Prio3 histograms over class × bin) cannot carry.
func withoutProbability(backend string, plans []*hosmer.Plan) error {
	if collectsProbability(plans) {
		return fmt.Errorf("the Hosmer–Lemeshow allocation releases the probability component, which the %s backend's verified reports (Prio3 histograms) cannot carry: use the roc or grid allocation, or the dcf backend", backend)
	}
	return nil
}

// collectsProbability reports whether a plan releases the probability
// component: the dataset must then collect it (testbed.Config.Probability).
func collectsProbability(plans []*hosmer.Plan) bool {
	for _, p := range plans {
		for _, spec := range p.Releases {
			if slices.Contains(spec.Components, core.Probability) {
				return true
			}
		}
	}
	return false
}
