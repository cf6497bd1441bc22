package audit_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/audit"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// The neighbouring pairs `fedecdf audit` derives for the tree of dp-ecdf
// Eq. (2) over 64 bins (L = 6): under add/remove, the suffix whose
// non-adjacent form needs ⌈(L+1)/2⌉ = 4 node noises; under replace-one,
// an interval needing L = 6; for the probability component (add/remove
// noise, at ε/2 per step under replace-one), a record with p = 1.
func ExampleWorstPair() {
	for _, tc := range []struct {
		relation  mechanism.Relation
		component payload.Component
	}{
		{mechanism.AddRemove, payload.Count},
		{mechanism.ReplaceOne, payload.Count},
		{mechanism.AddRemove, payload.Probability},
	} {
		p, err := audit.WorstPair(mechanism.Params{Name: "tree", Bins: 64, Epsilon: 1, Relation: tc.relation}, tc.component)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%v, %v: %s\n  %s = %g\n", tc.relation, tc.component, p.Description, p.NormName, p.Norm)
	}
	// Output:
	// addremove, count: D′ = D + one record in bin 12: prefixes 12–64 change by 1
	//   least node shift ‖χ‖₁ = 4
	// replace, count: D has one record in bin 4; in D′ it is in bin 44: prefixes 4–43 change by 1
	//   least node shift ‖χ‖₁ = 6
	// addremove, probability: D′ = D + one record with p = 1 in bin 12: prefixes 12–64 change by 4294967296
	//   least node shift ‖χ‖₁ = 4
}
