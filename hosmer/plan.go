package hosmer

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// Plan is a way to spend a budget ε on the releases Private needs, all
// under the replace-one relation (n public).
type Plan struct {
	Name string
	// Releases are the specs to create, in order; Private reads the
	// components from whichever covers them.
	Releases []aggregation.ReleaseSpec
	// CountFromLabels tells Private to take counts from Label + NotLabel.
	CountFromLabels bool
	// ExpectedFromGrid tells Private to estimate the expected positives
	// from the released counts and the bins' centre probabilities
	// (Config.Centers) instead of a Probability component.
	ExpectedFromGrid bool
	// Epsilon is the proved replace-one guarantee of all releases
	// together (see the package documentation), and exactly what an
	// aggregation ledger charges for them (Σ over releases of spec ε ×
	// payload.PrivacyUnits of its components).
	Epsilon float64
}

// PaperPlan is the allocation of dp-ecdf Algorithm 2 (line 3 and the
// proof of Theorem 5.1, Appendix 0.A.2): ε' = ε/(L+9) with L = ⌈log2 N⌉;
// the ECDF of predicted probabilities for the quantiles is a tree release
// with Lap(1/ε') node noise, (L+1)ε'-DP by Theorem 3.1 (here a release
// at (L+1)ε', whose node noise Lap(L/((L+1)ε')) is a little smaller since
// the tree's exact sensitivity is L); the group
// statistics get 8ε', since one replaced instance touches two groups and
// four statistics (O_0, O_1, E_0, E_1) in each, ε' each. Here the group
// sizes come from the count release (free), so O_0 = Size − O_1 and
// E_0 = Size − E_1 and only Σy and Σp are released: one release of
// {Label, Probability} at spec ε_c = 4ε' per component, two privacy
// units that the ledger charges 8ε' and which is 8ε'-DP (weights y + p ≤ 2 removed and added).
// template supplies the mechanism name, k and δ; its Bins, Epsilon and
// Relation are set here.
func PaperPlan(epsilon float64, bins int, template mechanism.Params) (*Plan, error) {
	if err := checkPlan(epsilon, bins); err != nil {
		return nil, err
	}
	levels := bits.Len(uint(bins - 1))
	unit := epsilon / float64(levels+9)
	return &Plan{
		Name: "paper",
		Releases: []aggregation.ReleaseSpec{
			spec(template, bins, float64(levels+1)*unit, core.Count),
			spec(template, bins, 4*unit, core.Label, core.Probability),
		},
		Epsilon: epsilon,
	}, nil
}

// JointPlan releases the payload vector (y, 1 − y, p) once, at spec
// ε/2 per component, and takes everything from it: counts as
// y + (1 − y) for the quantiles and group sizes, Σy and Σp per group.
// It is ε-DP under replace-one (package documentation, checked by
// enumeration in the tests), and the ledger charges exactly ε: two
// privacy units, the {Label, NotLabel} pair and Probability, at ε/2.
func JointPlan(epsilon float64, bins int, template mechanism.Params) (*Plan, error) {
	if err := checkPlan(epsilon, bins); err != nil {
		return nil, err
	}
	if template.Delta != 0 {
		return nil, fmt.Errorf("hosmer: the joint plan is proved for pure ε-DP mechanisms (tree, kary), not δ = %v", template.Delta)
	}
	return &Plan{
		Name:            "joint",
		Releases:        []aggregation.ReleaseSpec{spec(template, bins, epsilon/2, core.Label, core.NotLabel, core.Probability)},
		CountFromLabels: true,
		Epsilon:         epsilon,
	}, nil
}

// GridPlan releases only {Label, NotLabel}, once, at spec ε — one privacy
// unit, ε-DP under replace-one (payload.PrivacyUnits), the very release
// of a private ROC curve on the same grid — and estimates everything from
// it: counts as Label + NotLabel, O_1 from Label, and E_1 = Σ_i ĉ_i·m_i
// over the group's bins from the released per-bin counts ĉ_i and the
// bins' centre probabilities m_i (Config.Centers). The grid must be over
// the predicted probabilities. E_1 then carries a binning error of at
// most half a bin width per instance, and its noise is the count noise
// scaled by the probabilities — small exactly where E_1 is small (the
// low-risk groups whose denominators blow H up, dp-ecdf §6.6) — instead
// of the full noise of a Probability release. See the package
// documentation for the comparison.
func GridPlan(epsilon float64, bins int, template mechanism.Params) (*Plan, error) {
	if err := checkPlan(epsilon, bins); err != nil {
		return nil, err
	}
	return &Plan{
		Name:             "grid",
		Releases:         []aggregation.ReleaseSpec{spec(template, bins, epsilon, core.Label, core.NotLabel)},
		CountFromLabels:  true,
		ExpectedFromGrid: true,
		Epsilon:          epsilon,
	}, nil
}

// BinCenters returns the centre probability (τ_{i−1} + τ_i)/2 of every
// bin of g (τ_0 = g.Min()), the m_i of GridPlan.
func BinCenters(g *ecdf.Grid) []float64 {
	t := g.Thresholds()
	m := make([]float64, len(t))
	prev := g.Min()
	for i, ti := range t {
		m[i], prev = (prev+ti)/2, ti
	}
	return m
}

func spec(template mechanism.Params, bins int, epsilon float64, comps ...core.Component) aggregation.ReleaseSpec {
	p := template
	p.Bins, p.Epsilon, p.Relation = bins, epsilon, mechanism.ReplaceOne
	return aggregation.ReleaseSpec{Mechanism: p, Components: comps}
}

func checkPlan(epsilon float64, bins int) error {
	if !(epsilon > 0) || math.IsInf(epsilon, 0) {
		return fmt.Errorf("hosmer: epsilon %v must be positive and finite", epsilon)
	}
	if bins < 1 {
		return fmt.Errorf("hosmer: number of bins %d is not positive", bins)
	}
	return nil
}
