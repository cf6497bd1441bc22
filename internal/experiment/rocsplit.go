package experiment

import (
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// splitShape is one k-ary shape for the {Label, NotLabel} pair under
// replace-one: its add/remove and replace-one ℓ1 sensitivities a ≤ r and
// the mean number of nodes per prefix.
type splitShape struct {
	k, a, r int
	nodes   float64
}

// rocSplit is lever (a) of issue 18 evaluated exactly (roc/doc.go,
// "Unequal scales"): the least weighted prefix variance
// w₊·Var(TPR) + w₋·Var(FPR), w = 1/n² of each class, over every k-ary
// shape k = 2..64 on bins prefixes and every pair of node scales
// (1/u, 1/v) with max(r·u, r·v, a·(u + v)) ≤ ε, against the released
// default: the add/remove mechanism at ε/2 on each vector (u = v =
// ε/(2a)). It returns both variances (in units of the Laplace
// variance 2b² at b = 1) and the best shape and rate ratio u/v.
func rocSplit(bins int, eps float64, nPos, nNeg float64) (base, best float64, k int, ratio float64, err error) {
	wPos, wNeg := 1/(nPos*nPos), 1/(nNeg*nNeg)
	weighted := func(s splitShape, u, v float64) float64 { return s.nodes * (wPos/(u*u) + wNeg/(v*v)) }
	best = math.Inf(1)
	rho := math.Cbrt(wPos / wNeg)
	for kk := 2; kk <= 64; kk++ {
		s, err := newSplitShape(bins, kk)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		if b := weighted(s, eps/(2*float64(s.a)), eps/(2*float64(s.a))); kk == 2 || b < base {
			base = b
		}
		// Minimise under u + v = ε/a (the flip), then cap u at ε/r (a
		// move among the positives); v ≤ ε/r holds as r ≤ 2a.
		u := eps / float64(s.a) * rho / (1 + rho)
		u = min(u, eps/float64(s.r))
		v := min(eps/float64(s.a)-u, eps/float64(s.r))
		if w := weighted(s, u, v); w < best {
			best, k, ratio = w, kk, u/v
		}
	}
	return base, best, k, ratio, nil
}

// newSplitShape reads the sensitivities and mean node count of the k-ary
// shape of arity k on bins prefixes from the mechanism package.
func newSplitShape(bins, k int) (splitShape, error) {
	s := splitShape{k: k}
	for _, rel := range []mechanism.Relation{mechanism.AddRemove, mechanism.ReplaceOne} {
		m, err := mechanism.New(mechanism.Params{Name: "kary", K: k, Bins: bins, Epsilon: 1, Relation: rel})
		if err != nil {
			return s, err
		}
		sens, ok := m.(interface{ Sensitivity() int })
		if !ok {
			return s, fmt.Errorf("kary mechanism has no Sensitivity")
		}
		if rel == mechanism.AddRemove {
			s.a, s.nodes = sens.Sensitivity(), m.MeanVariance()/m.NodeVariance()
		} else {
			s.r = sens.Sensitivity()
		}
	}
	return s, nil
}
