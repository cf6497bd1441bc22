package payload

import "fmt"

// PrivacyUnits returns the number of (ε, δ) units a release of the given
// components costs, each component's noise being ComponentMechanism's at
// the release's spec (ε, δ): the components fall into independent groups
// that compose by basic composition, and each group alone is (ε, δ)-DP.
//
//   - Count is a group of its own: (ε, δ) by its calibration.
//   - Label and NotLabel together are one group. One instance puts its
//     unit weight into exactly one of them (y or 1 − y). Under add/remove
//     a neighbour adds or removes that unit in one component: (ε, δ).
//     Under replace-one, replacing (a, y) by (b, y') is a removal of one
//     unit from one component followed by an addition of one unit to one
//     component; each step changes a single component's input by one
//     add/remove, which ComponentMechanism runs at (ε/2, δ/(1 + e^{ε/2})),
//     so group privacy over the two steps gives (ε, δ) for the pair —
//     exactly what a move inside a single component costs. (dp-ecdf §5.1
//     composes the two vectors as 2ε; roc/doc.go restates this bound.)
//   - Probability is a group of its own: (ε, δ) by its calibration.
//
// So a release of {Label, NotLabel} costs 1 unit, not 2, and one of
// {Label, NotLabel, Probability} costs 2, not 3 (hosmer.JointPlan). A
// duplicate or unknown component is an error.
func PrivacyUnits(comps []Component) (int, error) {
	var seen [NumComponents]bool
	for _, c := range comps {
		if !c.Valid() {
			return 0, fmt.Errorf("payload: unknown payload component %d", c)
		}
		if seen[c] {
			return 0, fmt.Errorf("payload: component %v listed twice", c)
		}
		seen[c] = true
	}
	units := 0
	for _, group := range [][]Component{{Count}, {Label, NotLabel}, {Probability}} {
		for _, c := range group {
			if seen[c] {
				units++
				break
			}
		}
	}
	return units, nil
}
