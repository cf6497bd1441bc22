package hierarchy_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
)

// The node counts of a binary tree over five bins, and the α-mRMSE of an
// estimator of a count of 100 that answers 90 or 120 with equal chance.
func Example() {
	t, _ := hierarchy.NewTree(5, 2)
	counts, _ := t.Counts([]int64{3, 0, 1, 4, 2})
	for l, row := range counts {
		fmt.Println("level", l, row)
	}
	est := []float64{90, 120}
	for _, alpha := range []float64{0, 0.1, 0.5} {
		fmt.Printf("α=%g: α-mRMSE %.2f\n", alpha, hierarchy.MRMSE(alpha, 100, est))
	}
	// Output:
	// level 0 [10]
	// level 1 [8 2]
	// level 2 [3 5 2]
	// level 3 [3 0 1 4 2]
	// α=0: α-mRMSE 15.81
	// α=0.1: α-mRMSE 7.07
	// α=0.5: α-mRMSE 0.00
}
