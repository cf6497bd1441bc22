package noise

import (
	"fmt"
	"math"
	"math/big"
)

// DiscreteGaussian is the discrete Gaussian N_Z(0, σ²) on the integers:
//
//	P(X = x) = e^{−x²/(2σ²)} / Σ_{y∈Z} e^{−y²/(2σ²)}.
//
// Shifting it by an integer k changes the Rényi divergence as a Gaussian
// of variance σ² does: it gives ρ-zCDP with ρ = k²/(2σ²) (Canonne,
// Kamath and Steinke, "The Discrete Gaussian for Differential Privacy",
// NeurIPS 2020, Thm 4). Its variance is below σ² and equal to it up to a
// relative O(e^{−2π²σ²}) (CKS20 Cor. 9 and Prop. 19).
//
// Sample follows CKS20 Algorithm 3: draw Y ~ Lap_Z(t) with t = ⌊σ⌋ + 1
// and accept it with probability exp(−(|Y| − σ²/t)²/(2σ²)), a Bernoulli
// of an exact rational exponent (Algorithm 1). σ² is a float64, hence an
// exact binary fraction num/den; sampling uses only integer arithmetic.
type DiscreteGaussian struct {
	sigma2   float64
	variance float64
	laplace  *DiscreteLaplace // Lap_Z(t), t = ⌊σ⌋ + 1
	num      *big.Int         // σ² = num/den
	denT     *big.Int         // den·t
	gammaDen *big.Int         // 2·num·den·t²: γ = (|Y|·den·t − num)²/gammaDen
	words    *wordCache
}

// NewDiscreteGaussian returns N_Z(0, sigma2). sigma2 must be positive and
// finite with σ below 2^52, and the denominator of its exact binary
// fraction at most 2^62: true of every σ² above 2^−10 and of every
// multiple of 2^−62 such as 2^−40 (RoundUpScale gives the least such σ²
// above a target). The numerator is not bounded: σ² = s²·2^64, the
// variance of a fixed-point component with 2^32 units per count, is
// sampled exactly.
//
// Its errors match ErrScale (errors.Is).
func NewDiscreteGaussian(sigma2 float64) (*DiscreteGaussian, error) {
	g, err := newDiscreteGaussian(sigma2)
	if err != nil {
		return nil, scaleError{fmt.Errorf("noise: %w", err)}
	}
	return g, nil
}

// newDiscreteGaussian is NewDiscreteGaussian without the package prefix.
func newDiscreteGaussian(sigma2 float64) (*DiscreteGaussian, error) {
	r, err := exactFraction("discrete Gaussian variance σ²", sigma2)
	if err != nil {
		return nil, err
	}
	num, den := r.Num(), r.Denom()
	// ⌊σ⌋ = ⌊√⌊σ²⌋⌋ for any real σ² ≥ 0.
	t := new(big.Int).Quo(num, den)
	t.Sqrt(t).Add(t, big.NewInt(1))
	if t.Cmp(big.NewInt(maxLaplaceScale)) > 0 {
		return nil, fmt.Errorf("discrete Gaussian variance σ² %v: σ must be below 2^52: use a larger ε or δ", sigma2)
	}
	laplace, err := newDiscreteLaplace(float64(t.Uint64())) // t ≤ 2^52: exact
	if err != nil {
		return nil, fmt.Errorf("discrete Gaussian variance σ² %v: %w", sigma2, err)
	}
	denT := new(big.Int).Mul(den, t)
	gammaDen := new(big.Int).Mul(num, denT)
	gammaDen.Mul(gammaDen, t).Lsh(gammaDen, 1)
	return &DiscreteGaussian{sigma2: sigma2, variance: discreteGaussianVariance(sigma2), laplace: laplace, num: num, denT: denT, gammaDen: gammaDen, words: new(wordCache)}, nil
}

// Sigma2 returns σ², the variance parameter (not exactly the variance).
func (g *DiscreteGaussian) Sigma2() float64 { return g.sigma2 }

// Variance returns the variance of N_Z(0, σ²) (computed once by
// discreteGaussianVariance; it is used for reporting, not for sampling).
func (g *DiscreteGaussian) Variance() float64 { return g.variance }

// discreteGaussianVariance sums the probability mass function of
// N_Z(0, σ²) for σ ≤ 100 (terms beyond |x| = 40σ + 1 are below e^{−800})
// and returns σ² beyond, where the two differ by a relative
// e^{−2π²σ²} < e^{−10^5}.
func discreteGaussianVariance(sigma2 float64) float64 {
	if sigma2 > 100*100 {
		return sigma2
	}
	limit := int(40*math.Sqrt(sigma2)) + 1
	mass, second := 1.0, 0.0 // the x = 0 term
	for x := 1; x <= limit; x++ {
		w := math.Exp(-float64(x*x) / (2 * sigma2))
		mass += 2 * w
		second += 2 * float64(x*x) * w
	}
	return second / mass
}

// Sample draws one value of N_Z(0, σ²) from src (CKS20 Algorithm 3).
func (g *DiscreteGaussian) Sample(src Source) int64 {
	var gammaNum, whole, frac big.Int
	for {
		y := g.laplace.Sample(src)
		abs := y
		if abs < 0 {
			abs = -abs
		}
		// γ = (|y| − σ²/t)²/(2σ²) = (|y|·den·t − num)² / (2·num·den·t²).
		gammaNum.SetInt64(abs)
		gammaNum.Mul(&gammaNum, g.denT).Sub(&gammaNum, g.num)
		gammaNum.Mul(&gammaNum, &gammaNum)
		whole.QuoRem(&gammaNum, g.gammaDen, &frac)
		wholeSteps := uint64(math.MaxUint64) // passing 2^64 Bernoulli(e^{−1}) steps has probability e^{−2^64}
		if whole.IsUint64() {
			wholeSteps = whole.Uint64()
		}
		if bernoulliExpNeg(src, wholeSteps, func() bool { return uniformBelowBig(src, g.gammaDen).Cmp(&frac) < 0 }) {
			return y
		}
	}
}

// bernoulliExpNeg returns true with probability e^{−(whole + γ)}, γ ∈
// [0, 1] given by a sampler of Bernoulli(γ) (CKS20 Algorithm 1, γ > 1
// branch): whole independent Bernoulli(e^{−1}) successes, then
// Bernoulli(e^{−γ}).
func bernoulliExpNeg(src Source, whole uint64, bernoulliGamma func() bool) bool {
	for ; whole > 0; whole-- {
		if !bernoulliExpNegOne(src) {
			return false
		}
	}
	return bernoulliExpNegFraction(src, bernoulliGamma)
}

// uniformBelowBig returns a uniform integer in [0, n), n ≥ 1, by
// rejection of uniform n.BitLen()-bit integers (acceptance above 1/2).
func uniformBelowBig(src Source, n *big.Int) *big.Int {
	bitLen := n.BitLen()
	buf := make([]byte, (bitLen+7)/8)
	topMask := byte(0xff >> (uint(len(buf))*8 - uint(bitLen)))
	z := new(big.Int)
	for {
		for i := 0; i < len(buf); i += 8 {
			w := src.Uint64()
			for j := i; j < len(buf) && j < i+8; j++ {
				buf[j] = byte(w)
				w >>= 8
			}
		}
		buf[0] &= topMask
		if z.SetBytes(buf).Cmp(n) < 0 {
			return z
		}
	}
}
