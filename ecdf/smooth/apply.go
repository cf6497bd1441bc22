package smooth

import (
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// Methods are the smoothing methods Apply knows, in the order --help lists them.
var Methods = []string{"none", "l1", "l2", "tree-l2"}

// Apply post-processes the raw private curve f (F̂ normalised by n) with the
// named method: "none" (a copy), "l1" (PointwiseL1), "l2" (PointwiseL2) or
// "tree-l2" (TreeL2 over m's noise pattern, default options). Smoothing is
// post-processing: it costs no privacy budget.
func Apply(method string, f []float64, m mechanism.Mechanism) ([]float64, error) {
	switch method {
	case "none":
		return slices.Clone(f), nil
	case "l1":
		return PointwiseL1(f), nil
	case "l2":
		return PointwiseL2(f), nil
	case "tree-l2":
		if m == nil {
			return nil, fmt.Errorf("smoothing tree-l2 needs the release's mechanism")
		}
		g, st, err := TreeL2(f, m, TreeOptions{})
		if err != nil {
			return nil, err
		}
		if !st.Converged {
			return nil, fmt.Errorf("smoothing tree-l2 did not converge in %d iterations (violation %.3g, gap %.3g); use l2", st.Iterations, st.Violation, st.Gap)
		}
		return g, nil
	}
	return nil, fmt.Errorf("unknown smoothing method %q (want one of %v)", method, Methods)
}
