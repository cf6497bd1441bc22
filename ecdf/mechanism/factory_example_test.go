package mechanism_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// New selects a mechanism by name; "auto" keeps the one with the least
// exact mean prefix variance for the given N, ε, δ and relation.
func ExampleNew() {
	tree, err := mechanism.New(mechanism.Params{Name: "tree", Bins: 1 << 15, Epsilon: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []mechanism.Params{
		{Name: "kary", Bins: 1 << 15, Epsilon: 1, K: 17},
		{Name: "auto", Bins: 1 << 15, Epsilon: 1},
		{Name: "auto", Bins: 1 << 15, Epsilon: 1, Delta: 1e-9},
	} {
		m, err := mechanism.New(p)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-13s ε=%g δ=%g %s: mean prefix variance %.2f× tree's\n",
			m.Name(), m.Epsilon(), m.Delta(), m.Relation(), m.MeanVariance()/tree.MeanVariance())
	}
	_, err = mechanism.New(mechanism.Params{Name: "laplace", Bins: 8, Epsilon: 1})
	fmt.Println(err)
	// Output:
	// kary(k=17)    ε=1 δ=0 replace: mean prefix variance 0.29× tree's
	// kary(k=32)    ε=1 δ=0 replace: mean prefix variance 0.24× tree's
	// cascade       ε=1 δ=1e-09 replace: mean prefix variance 0.21× tree's
	// mechanism: unknown mechanism "laplace" (valid: tree, kary, cascade, gaussian-tree, auto, partitioned)
}
