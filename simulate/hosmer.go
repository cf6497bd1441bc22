package simulate

import (
	"context"
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/roc"
)

// hosmerGroups is Q, the number of Hosmer–Lemeshow groups (dp-ecdf §6.6).
const hosmerGroups = 10

// hosmerMinExpected clips every released expected count of a group to at
// least this many instances (hosmer.Config.MinExpected): post-processing
// that keeps H finite when noise drives a small E_1 or E_0 to 0 or below.
const hosmerMinExpected = 1

// HosmerReport is the Hosmer–Lemeshow test (dp-ecdf Eq. 5, Algorithm 2)
// on the parties' predicted probabilities, exact and private. The
// top-level private statistic is that of the first allocation.
type HosmerReport struct {
	Groups           int                `json:"groups"`
	StatisticTrue    float64            `json:"statistic_true"`
	PValueTrue       *float64           `json:"p_value_true"`
	StatisticPrivate *float64           `json:"statistic_private"`
	PValuePrivate    *float64           `json:"p_value_private"`
	True             []CalibrationGroup `json:"true_groups"`
	Allocations      []HosmerAllocation `json:"allocations"`
}

// HosmerAllocation is one private run of Algorithm 2 under one way of
// spending its ε (hosmer.PaperPlan or hosmer.JointPlan).
type HosmerAllocation struct {
	Plan string `json:"plan"`
	// Epsilon is the proved replace-one guarantee of the plan's releases,
	// which is what the servers' ledgers charged.
	Epsilon          float64            `json:"epsilon"`
	Releases         []string           `json:"releases"`
	StatisticPrivate *float64           `json:"statistic_private"`
	PValuePrivate    *float64           `json:"p_value_private"`
	Groups           []CalibrationGroup `json:"groups"`
	// Error says why the private statistic is undefined (null), e.g. a
	// released group whose expected negatives are not positive; the
	// release is spent all the same.
	Error string `json:"error,omitempty"`
}

// CalibrationGroup is one group's size and observed and expected
// positives, exact or released.
type CalibrationGroup struct {
	FirstBin int     `json:"first_bin"`
	LastBin  int     `json:"last_bin"`
	Size     float64 `json:"size"`
	Observed float64 `json:"observed"`
	Expected float64 `json:"expected"`
}

// hosmerPlans builds the plans named in cfg.HosmerPlans, each with an
// equal share of ε_HL = cfg.Epsilon·cfg.HosmerShare.
func hosmerPlans(cfg Config) ([]*hosmer.Plan, error) {
	if cfg.HosmerShare == 0 {
		return nil, nil
	}
	if len(cfg.HosmerPlans) == 0 {
		return nil, fmt.Errorf("Hosmer–Lemeshow share %g of ε but no allocation plan named (paper, joint)", cfg.HosmerShare)
	}
	eps := cfg.Epsilon * cfg.HosmerShare / float64(len(cfg.HosmerPlans))
	template := mechanism.Params{Name: cfg.Mechanism}
	var plans []*hosmer.Plan
	for _, name := range cfg.HosmerPlans {
		var p *hosmer.Plan
		var err error
		switch name {
		case "paper":
			p, err = hosmer.PaperPlan(eps, cfg.Bins, template)
		case "joint":
			p, err = hosmer.JointPlan(eps, cfg.Bins, template)
		default:
			err = fmt.Errorf("Hosmer–Lemeshow allocation %q is unknown (valid: paper, joint)", name)
		}
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// hosmerReport runs Algorithm 2 under each plan (creating its releases
// on u) and computes the exact statistic on the same grid.
func hosmerReport(ctx context.Context, u aggregation.UStat, plans []*hosmer.Plan, method string, parties []*party.Party, probs []float64, bins int) (*HosmerReport, error) {
	exact, err := exactHosmer(parties, probs, bins)
	if err != nil {
		return nil, err
	}
	r := &HosmerReport{Groups: hosmerGroups, StatisticTrue: exact.H, PValueTrue: finite(exact.PValue), True: calibration(exact.Groups)}
	for _, plan := range plans {
		a, err := privateHosmer(ctx, u, plan, method, len(parties), bins)
		if err != nil {
			return nil, fmt.Errorf("Hosmer–Lemeshow, %s allocation: %w", plan.Name, err)
		}
		r.Allocations = append(r.Allocations, *a)
	}
	if len(r.Allocations) > 0 {
		r.StatisticPrivate, r.PValuePrivate = r.Allocations[0].StatisticPrivate, r.Allocations[0].PValuePrivate
	}
	return r, nil
}

// exactHosmer is the textbook test on the grid: groups at the exact
// quantiles of the binned probabilities.
func exactHosmer(parties []*party.Party, probs []float64, bins int) (*hosmer.Result, error) {
	pBins, labels := make([]int, len(parties)), make([]int, len(parties))
	for k, p := range parties {
		pBins[k], labels[k] = p.Bin(), int(p.Payload(aggregation.Label))
	}
	hist, err := ecdf.Histogram(pBins, bins)
	if err != nil {
		return nil, err
	}
	bounds, err := hosmer.Boundaries(ecdf.ECDF(hist), hosmerGroups)
	if err != nil {
		return nil, err
	}
	groups, err := hosmer.Exact(pBins, labels, probs[:len(parties)], bounds)
	if err != nil {
		return nil, err
	}
	h, err := hosmer.Statistic(groups)
	if err != nil {
		return nil, fmt.Errorf("exact Hosmer–Lemeshow statistic: %w", err)
	}
	res := &hosmer.Result{Boundaries: bounds, Groups: groups, H: h, PValue: math.NaN()}
	if len(groups) >= 3 {
		res.PValue, _ = hosmer.PValue(h, len(groups))
	}
	return res, nil
}

// privateHosmer creates plan's releases on u and runs hosmer.Private on
// them, smoothing the released ECDF of probabilities with method.
func privateHosmer(ctx context.Context, u aggregation.UStat, plan *hosmer.Plan, method string, n, bins int) (*HosmerAllocation, error) {
	a := &HosmerAllocation{Plan: plan.Name, Epsilon: plan.Epsilon}
	var rels []*aggregation.Release
	for _, spec := range plan.Releases {
		rel, err := u.NewRelease(ctx, spec)
		if err != nil {
			return nil, err
		}
		rels = append(rels, rel)
		a.Releases = append(a.Releases, fmt.Sprintf("%v at ε=%.4g each: %s", spec.Components, spec.Mechanism.Epsilon, rel.Guarantee()))
	}
	countMech := rels[0].Mechanism(aggregation.Count)
	if plan.CountFromLabels {
		// Count = Label + NotLabel: two independent draws of one noise
		// pattern, so tree-l2 follows the same terms.
		countMech = rels[0].Mechanism(aggregation.Label)
	}
	var smoother hosmer.Smoother
	if method != "none" {
		smoother = func(f []float64) ([]float64, error) { return smooth.Apply(method, f, countMech) }
	}
	res, err := hosmer.Private(roc.UStatSource{Ctx: ctx, UStat: u, Releases: rels}, hosmer.Config{
		Bins: bins, Reports: n, Groups: hosmerGroups, Smooth: smoother,
		CountFromLabels: plan.CountFromLabels, MinExpected: hosmerMinExpected,
	})
	if err != nil {
		a.Error = err.Error() // noise made the statistic undefined
		return a, nil
	}
	a.StatisticPrivate, a.PValuePrivate, a.Groups = finite(res.H), finite(res.PValue), calibration(res.Groups)
	return a, nil
}

func calibration(groups []hosmer.Group) []CalibrationGroup {
	out := make([]CalibrationGroup, len(groups))
	for k, g := range groups {
		out[k] = CalibrationGroup{FirstBin: g.First, LastBin: g.Last, Size: g.Size, Observed: g.Positives, Expected: g.Expected}
	}
	return out
}

// finite returns &v, or nil (JSON null) when v is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
