package smooth

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// Hooks for the benchmarks of package smooth_test, which time CPU with
// internal/bench (an importer of this package).

// ExactTreeL2 runs tree-l2 by the exact method and returns its active-set
// iterations; it fails if the pattern is not a path-sum tree.
func ExactTreeL2(f []float64, m mechanism.Mechanism) (int, error) {
	_, st, err := treeL2(f, m, treeOptions{})
	if err == nil && !st.Exact {
		err = fmt.Errorf("%s is not solved exactly: %+v", m.Name(), st)
	}
	return st.Iterations, err
}

// GradientTreeL2 runs tree-l2 by the dual gradient method (tolerance 1e-9).
func GradientTreeL2(f []float64, m mechanism.Mechanism) error {
	_, _, err := treeL2(f, m, treeOptions{Gradient: true})
	return err
}

// BuildPathTree builds m's path-sum tree, bypassing the cache.
func BuildPathTree(m mechanism.Mechanism) bool {
	_, ok := newPathTree(m)
	return ok
}
