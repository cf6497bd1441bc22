package audit

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// The block sums give the Mahalanobis norm DᵀPD of every interval.
func TestMahalanobisMatchesQuadraticForm(t *testing.T) {
	m := newMech(t, "cascade", 8, 0, mechanism.ReplaceOne)
	p, err := precision(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	sums := newBlockSums(p)
	for first := 1; first <= 8; first++ {
		for last := first; last <= 8; last++ {
			d := mat.NewVecDense(8, nil)
			for i := first; i <= last; i++ {
				d.SetVec(i-1, 1)
			}
			want := math.Sqrt(mat.Inner(d, p, d))
			if got := sums.mahalanobis(first, last); math.Abs(got-want) > 1e-9*want {
				t.Errorf("[%d, %d]: %v, want %v", first, last, got, want)
			}
		}
	}
}

// gaussian-tree's prefixes are an invertible image of its used nodes
// (digits 0/1 use only keys ≤ N), so the worst pair's μ² is the node
// shift's ‖χ‖₂² = Δ over the node variance: μ²·NodeVariance = Δ.
func TestGaussianTreeWorstPairIsSensitivity(t *testing.T) {
	for _, n := range []int{7, 16, 33} {
		for _, r := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
			t.Run(fmt.Sprintf("N=%d/%v", n, r), func(t *testing.T) {
				m := newMech(t, "gaussian-tree", n, 0, r)
				mdl, err := newModel(m, 1)
				if err != nil {
					t.Fatal(err)
				}
				p := worstPair(mdl, n, r, 0)
				sens := float64(m.(interface{ Sensitivity() int }).Sensitivity())
				if got := p.Norm * p.Norm * m.NodeVariance(); math.Abs(got-sens) > 1e-6*sens {
					t.Errorf("worst pair %+v: μ²·Var = %v, want Δ = %v", p, got, sens)
				}
			})
		}
	}
}

// gaussianEpsilon inverts Balle and Wang's δ(ε).
func TestGaussianEpsilonInvertsDelta(t *testing.T) {
	for _, tc := range []struct{ mu, delta float64 }{{0.2, 1e-6}, {1, 1e-5}, {3, 1e-3}, {10, 1e-9}} {
		eps := gaussianEpsilon(tc.mu, tc.delta)
		if got := mechanism.GaussianDelta(tc.mu, 1, eps); math.Abs(got-tc.delta) > 1e-6*tc.delta {
			t.Errorf("μ=%v δ=%v: ε = %v gives δ(ε) = %v", tc.mu, tc.delta, eps, got)
		}
	}
	if eps := gaussianEpsilon(1e4, 1e-6); math.IsInf(eps, 0) || eps < 1e7 {
		t.Errorf("μ = 10⁴: ε = %v, want the finite zCDP bound above 5·10⁷", eps)
	}
}
