package analysis_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/analysis"
)

// A release whose noise left fewer than one negative is still a curve:
// the total is raised to 1, and the result says so.
func ExampleClampTotals() {
	pos, neg := []float64{3, 7, 12}, []float64{0, 1, -0.4}
	for _, note := range analysis.ClampTotals(pos, neg) {
		fmt.Println(note)
	}
	fmt.Println(pos[2], neg[2])
	// Output:
	// the released number of negatives -0.4 is below one instance and was raised to 1 (post-processing; too few of them for this ε)
	// 12 1
}
