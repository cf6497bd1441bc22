package audit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// precision returns P = Σ⁻¹, Σ the covariance of the released prefix
// noise of m in record units (its integer units divided by unit): from
// the Terms, Σ_ij = NodeVariance·Σ_v a_iv·a_jv, plus on the diagonal the
// part of PrefixVariance the terms do not carry (Cascade Sampling's
// rounding).
func precision(m mechanism.Mechanism, unit float64) (*mat.SymDense, error) {
	n := m.Bins()
	terms := make([]map[int]float64, n)
	for i := range terms {
		terms[i] = map[int]float64{}
		for _, t := range m.Terms(i+1, nil) {
			terms[i][t.Node] += t.Coef
		}
	}
	v := m.NodeVariance() / (unit * unit)
	cov := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			var s float64
			for node, a := range terms[i] {
				s += a * terms[j][node]
			}
			cov.SetSym(i, j, v*s)
		}
		rest := m.PrefixVariance(i+1)/(unit*unit) - cov.At(i, i)
		cov.SetSym(i, i, cov.At(i, i)+max(rest, 0))
	}
	var chol mat.Cholesky
	if !chol.Factorize(cov) {
		return nil, fmt.Errorf("%w: %s: the prefix noise covariance is singular", ErrPattern, m.Name())
	}
	var p mat.SymDense
	if err := chol.InverseTo(&p); err != nil {
		return nil, fmt.Errorf("%w: %s: inverting the prefix noise covariance: %v", ErrPattern, m.Name(), err)
	}
	return &p, nil
}

// blockSums holds the sums of P over the squares [a, e]² of prefixes, so
// that the squared Mahalanobis norm 1_{[a,e]}ᵀ·P·1_{[a,e]} of an interval
// costs O(1): S[i][j] = Σ_{a<i, b<j} P_ab.
type blockSums [][]float64

func newBlockSums(p *mat.SymDense) blockSums {
	n := p.SymmetricDim()
	s := make(blockSums, n+1)
	for i := range s {
		s[i] = make([]float64, n+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			s[i][j] = p.At(i-1, j-1) + s[i-1][j] + s[i][j-1] - s[i-1][j-1]
		}
	}
	return s
}

// mahalanobis returns ‖1_{[first,last]}‖_P, the norm of the shift of
// prefixes first..last by one record in the metric of the noise.
func (s blockSums) mahalanobis(first, last int) float64 {
	a, e := first-1, last
	q := s[e][e] - s[a][e] - s[e][a] + s[a][a]
	return math.Sqrt(max(q, 0))
}

// gaussianEpsilon returns the ε at which a Gaussian mechanism whose
// neighbours are μ apart in the metric of its noise is (ε, δ)-DP: the
// root of δ(ε) = δ for the exact δ(ε) of Balle and Wang 2018, Thm 8
// (mechanism.GaussianDelta with sensitivity μ and σ = 1), by bisection.
// Beyond ε = 512, where e^ε·Φ(·) loses precision, it returns the zCDP
// bound μ²/2 + μ·√(2 ln(1/δ)) (ρ = μ²/2), which is above the root.
func gaussianEpsilon(mu, delta float64) float64 {
	if mu == 0 || mechanism.GaussianDelta(mu, 1, 0) <= delta {
		return 0
	}
	lo, hi := 0.0, 1.0
	for mechanism.GaussianDelta(mu, 1, hi) > delta {
		if lo, hi = hi, 2*hi; hi > 512 {
			return mu*mu/2 + mu*math.Sqrt(2*math.Log(1/delta))
		}
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if mechanism.GaussianDelta(mu, 1, mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
