package experiment_test

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/internal/experiment"
)

// Fig. 4 on a small grid: for each mechanism, the ECDF, inverse-ECDF and
// smoothed inverse-ECDF MSE series (and the tree's exact expectation), one point per ε.
func ExampleFig4() {
	cfg := experiment.Config{Runs: 5, Epsilons: []float64{0.1, 1, 10}, Bins: 256, Mechanisms: []string{"tree", "kary"}}
	fig, err := experiment.Fig4(context.Background(), cfg)
	if err != nil {
		panic(err)
	}
	for _, s := range fig.Series {
		fmt.Printf("%s: %d points\n", s.Name, len(s.X))
	}
	// Output:
	// ECDF tree: 3 points
	// inverse tree: 3 points
	// inverse smoothed tree: 3 points
	// ECDF tree theory: 3 points
	// ECDF kary(k=16): 3 points
	// inverse kary(k=16): 3 points
	// inverse smoothed kary(k=16): 3 points
}
