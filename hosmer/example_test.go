package hosmer_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
)

// The Hosmer–Lemeshow statistic of eleven instances in three groups of a
// six-bin probability grid (bins 1–2, 3–4, 5–6), computed directly.
func ExampleStatistic() {
	bins := []int{1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 6}
	labels := []int{1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0}
	probs := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25}
	groups, err := hosmer.Exact(bins, labels, probs, []int{2, 4, 6})
	if err != nil {
		panic(err)
	}
	h, err := hosmer.Statistic(groups)
	if err != nil {
		panic(err)
	}
	p, err := hosmer.PValue(h, len(groups))
	if err != nil {
		panic(err)
	}
	for _, g := range groups {
		fmt.Printf("bins %d-%d: n=%g O1=%g E1=%g\n", g.First, g.Last, g.Size, g.Positives, g.Expected)
	}
	fmt.Printf("H = %.4f, p = %.4f\n", h, p)
	// Output:
	// bins 1-2: n=4 O1=1 E1=2
	// bins 3-4: n=5 O1=4 E1=2.5
	// bins 5-6: n=2 O1=0 E1=0.5
	// H = 3.4667, p = 0.0626
}

// The paper's allocation of ε = 1 over a grid of 1024 bins (L = 10,
// ε' = 1/19) next to the joint one-release plan.
func ExamplePaperPlan() {
	for _, mk := range []func(float64, int, mechanism.Params) (*hosmer.Plan, error){hosmer.PaperPlan, hosmer.JointPlan} {
		plan, err := mk(1, 1024, mechanism.Params{Name: "tree"})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: ε=%g\n", plan.Name, plan.Epsilon)
		for _, r := range plan.Releases {
			fmt.Printf("  %v at ε=%.4f each\n", r.Components, r.Mechanism.Epsilon)
		}
	}
	// Output:
	// paper: ε=1
	//   [count] at ε=0.5789 each
	//   [label probability] at ε=0.2105 each
	// joint: ε=1
	//   [label notlabel probability] at ε=0.5000 each
}
