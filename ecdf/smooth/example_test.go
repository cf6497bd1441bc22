package smooth_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
)

func ExamplePointwiseL2() {
	raw := []float64{-0.02, 0.31, 0.27, 0.64, 1.03}
	fmt.Printf("%.2f\n", smooth.PointwiseL2(raw))
	// Output: [0.00 0.29 0.29 0.64 1.00]
}

func ExampleApply_l1() {
	raw := []float64{0.10, 0.50, 0.20, 0.30, 1.20}
	smoothed, err := smooth.Apply("l1", raw, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.2f\n", smoothed)
	// Output: [0.10 0.20 0.20 0.30 1.00]
}

// The tree form corrects the mechanism's noise nodes rather than the
// points. The drop of 0.1 between bins 2 and 3 of a 4-bin tree release
// involves four nodes (leaves 2 and 3, the two level-1 nodes); the least
// correction moves each by 0.025, so whole halves of the curve move, unlike
// PointwiseL2, which gives [0.30 0.50 0.50 0.90].
func ExampleApply_treeL2() {
	m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: 4, Epsilon: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	raw := []float64{0.30, 0.55, 0.45, 0.90}
	smoothed, err := smooth.Apply("tree-l2", raw, m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", smoothed)
	// Output: [0.2750 0.5000 0.5000 0.9250]
}

func ExampleApply() {
	raw := []float64{0.05, 0.40, 0.35, 0.70, 1.10}
	for _, method := range []string{"none", "l1", "l2"} {
		smoothed, err := smooth.Apply(method, raw, nil) // only tree-l2 needs the mechanism
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-4s %.3f\n", method, smoothed)
	}
	_, err := smooth.Apply("l3", raw, nil)
	fmt.Println(err)
	// Output:
	// none [0.050 0.400 0.350 0.700 1.100]
	// l1   [0.050 0.350 0.350 0.700 1.000]
	// l2   [0.050 0.375 0.375 0.700 1.000]
	// smooth: unknown smoothing method "l3" (valid: none, l1, l2, tree-l2)
}
