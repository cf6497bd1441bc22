package hosmer

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/fedecdf/fedecdf/aggregation"
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
	// Epsilon is the proved replace-one guarantee of all releases
	// together (see the package documentation), and exactly what an
	// aggregation ledger charges for them (Σ over releases of spec ε ×
	// protocol.PrivacyUnits of its components).
	Epsilon float64
}

// PaperPlan is the allocation of dp-ecdf Algorithm 2 (line 3 and the
// proof of Theorem 5.1, Appendix 0.A.2): ε' = ε/(L+9) with L = ⌈log2 N⌉;
// the ECDF of predicted probabilities for the quantiles is a tree release
// with Lap(1/ε') node noise, (L+1)ε'-DP by Theorem 3.1; the group
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
			spec(template, bins, float64(levels+1)*unit, aggregation.Count),
			spec(template, bins, 4*unit, aggregation.Label, aggregation.Probability),
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
		Releases:        []aggregation.ReleaseSpec{spec(template, bins, epsilon/2, aggregation.Label, aggregation.NotLabel, aggregation.Probability)},
		CountFromLabels: true,
		Epsilon:         epsilon,
	}, nil
}

func spec(template mechanism.Params, bins int, epsilon float64, comps ...aggregation.Component) aggregation.ReleaseSpec {
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
