package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
)

// TestSmoothedECDFReachesOneUnderReplace: under replace-one n is public,
// so F = 1 at the grid's top and the smoothed curve ends there whatever
// the noise of the last prefix; reading fewer prefixes leaves the last
// smoothed point free.
func TestSmoothedECDFReachesOneUnderReplace(t *testing.T) {
	const bins, n = 32, 50
	rng := rand.New(rand.NewPCG(5, 6))
	truth := prefixSums(n, bins, 0, rng)
	rel := testRelease(t, []core.Component{core.Count}, bins, n, 0.2)
	g, err := ecdf.NewLinearGrid(-3, 3, bins)
	if err != nil {
		t.Fatal(err)
	}
	below := 0
	for range 20 {
		res := noisyResult(rel, core.Count, truth, rng)
		e, err := NewECDF(res, g, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{"l1", "l2", "tree-l2"} {
			if err := e.Smooth(method, nil); err != nil {
				t.Fatal(err)
			}
			if last := e.Smoothed[len(e.Smoothed)-1]; last != 1 {
				t.Errorf("%s: smoothed F at the grid's top %g, want 1 (n = %d public)", method, last, n)
			}
		}
		if e.Raw[len(e.Raw)-1] < 1 {
			below++
		}
	}
	if below == 0 {
		t.Fatal("no draw's raw F at the top fell below 1: the test tests nothing")
	}
}
