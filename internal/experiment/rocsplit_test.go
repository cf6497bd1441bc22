package experiment

import (
	"math"
	"testing"
)

// TestRocSplitIsOptimal: rocSplit's closed form (the flip constraint's
// Lagrange optimum capped by the moves) matches a brute-force search
// over the feasible rates max(r·u, r·v, a·(u + v)) ≤ ε of every k-ary
// shape, and is never worse than the equal split of the release.
func TestRocSplitIsOptimal(t *testing.T) {
	const bins, eps, nPos, nNeg = 64, 1.0, 5289.0, 39922.0
	base, best, _, _, err := rocSplit(bins, eps, nPos, nNeg)
	if err != nil {
		t.Fatal(err)
	}
	brute := math.Inf(1)
	for k := 2; k <= 64; k++ {
		s, err := newSplitShape(bins, k)
		if err != nil {
			t.Fatal(err)
		}
		if s.r < s.a || s.r > 2*s.a {
			t.Errorf("k = %d: sensitivities a = %d, r = %d outside a ≤ r ≤ 2a", k, s.a, s.r)
		}
		for i := 1; i < 2000; i++ { // u on a fine grid, v as large as allowed
			u := eps / float64(s.r) * float64(i) / 2000
			v := min(eps/float64(s.a)-u, eps/float64(s.r))
			if v <= 0 {
				continue
			}
			brute = min(brute, s.nodes*(1/(nPos*nPos*u*u)+1/(nNeg*nNeg*v*v)))
		}
	}
	if !(best <= base) || math.Abs(best-brute) > 1e-3*brute {
		t.Errorf("rocSplit best %g, brute force %g, equal split %g", best, brute, base)
	}
}
