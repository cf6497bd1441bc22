package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// DiscreteLaplace is the discrete Laplace distribution (two-sided
// geometric) Lap_Z(t) of scale t > 0 on the integers:
//
//	P(X = x) = (1 − r)/(1 + r) · r^|x|,   r = e^{−1/t},
//
// so that shifting it by an integer k changes the log-probability of any
// outcome by at most |k|/t: adding Lap_Z(Δ/ε) to an integer query of ℓ1
// sensitivity Δ is ε-DP, exactly as with the continuous Laplace.
//
// Its variance is 2r/(1 − r)², slightly below the continuous 2t²:
// 2r/(1 − r)² = 1/(2 sinh²(1/(2t))) = 2t² − 1/6 + O(1/t²).
//
// Sample follows Canonne, Kamath and Steinke, "The Discrete Gaussian for
// Differential Privacy" (NeurIPS 2020), Algorithms 1 and 2. The scale, a
// float64, is an exact binary fraction t = num/den; sampling uses only
// uniform integers below num, den and small counters, never floating
// point, so its output distribution is exactly Lap_Z(t) (conditioned on
// |X| < 2^63, an event of probability above 1 − e^{−2^10}).
type DiscreteLaplace struct {
	scale    float64
	num, den uint64 // scale = num/den in lowest terms
}

// maxRationalPart bounds the numerator and denominator of a scale, and
// maxLaplaceScale the scale itself, so that Sample's integer arithmetic
// never overflows except with probability below e^{−2^10}.
const (
	maxRationalPart = 1 << 62
	maxLaplaceScale = 1 << 52
)

// NewDiscreteLaplace returns Lap_Z(scale). The scale must be positive and
// finite, at most 2^52, and its exact binary fraction must have numerator
// and denominator at most 2^62 (true of every scale above 2^−10 and of
// every dyadic scale such as 0.5 or 2^−40).
func NewDiscreteLaplace(scale float64) (*DiscreteLaplace, error) {
	num, den, err := exactFraction("discrete Laplace scale", scale)
	if err != nil {
		return nil, err
	}
	if scale > maxLaplaceScale {
		return nil, fmt.Errorf("discrete Laplace scale %v is above the supported maximum 2^52", scale)
	}
	return &DiscreteLaplace{scale: scale, num: num, den: den}, nil
}

// exactFraction writes a positive finite float64 as num/den in lowest
// terms, both at most maxRationalPart.
func exactFraction(what string, x float64) (num, den uint64, err error) {
	if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
		return 0, 0, fmt.Errorf("%s %v: must be positive and finite", what, x)
	}
	r := new(big.Rat).SetFloat64(x)
	n, d := r.Num(), r.Denom()
	limit := big.NewInt(maxRationalPart)
	if n.Cmp(limit) > 0 || d.Cmp(limit) > 0 {
		return 0, 0, fmt.Errorf("%s %v: its exact binary fraction %v needs more than 62 bits", what, x, r)
	}
	return n.Uint64(), d.Uint64(), nil
}

// Scale returns t.
func (d *DiscreteLaplace) Scale() float64 { return d.scale }

// Variance returns the exact variance 2r/(1 − r)², r = e^{−1/t}.
func (d *DiscreteLaplace) Variance() float64 {
	r := math.Exp(-1 / d.scale)
	oneMinusR := -math.Expm1(-1 / d.scale)
	return 2 * r / (oneMinusR * oneMinusR)
}

// Sample draws one value of Lap_Z(num/den) from src (CKS20 Algorithm 2
// with t = num, s = den): X = U + num·V is geometric with P(X = x) ∝
// e^{−x/num}, where U is uniform below num accepted with probability
// e^{−U/num} and V counts successes of Bernoulli(e^{−1}); then ⌊X/den⌋
// with a random sign, rejecting "−0", is Lap_Z(num/den).
func (d *DiscreteLaplace) Sample(src Source) int64 {
	for {
		u := uniformBelow(src, d.num)
		if !bernoulliExpNegFraction(src, func() bool { return uniformBelow(src, d.num) < u }) {
			continue
		}
		var v uint64
		for bernoulliExpNegOne(src) {
			v++
		}
		hi, lo := bits.Mul64(d.num, v)
		lo, carry := bits.Add64(lo, u, 0)
		hi += carry
		if hi >= d.den {
			continue // ⌊X/den⌋ ≥ 2^64: probability below e^{−2^10}
		}
		y, _ := bits.Div64(hi, lo, d.den)
		if y > math.MaxInt64 {
			continue
		}
		negative := src.Uint64()&1 == 1
		switch {
		case negative && y == 0:
			continue
		case negative:
			return -int64(y)
		default:
			return int64(y)
		}
	}
}

// uniformBelow returns a uniform integer in [0, n), n ≥ 1, by Lemire's
// multiply-and-reject method ("Fast random integer generation in an
// interval", 2019): exact, and usually one draw.
func uniformBelow(src Source, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// bernoulliExpNegFraction returns true with probability e^{−γ} for some
// γ ∈ [0, 1], given bernoulliGamma, a sampler of Bernoulli(γ) (CKS20
// Algorithm 1): with K starting at 1, draw A ~ Bernoulli(γ/K) and
// increment K while A = 1; K ends odd with probability
// Σ_k (−γ)^k/k! = e^{−γ}. Bernoulli(γ/K) is drawn as the conjunction of
// the independent Bernoulli(1/K) and Bernoulli(γ).
func bernoulliExpNegFraction(src Source, bernoulliGamma func() bool) bool {
	k := uint64(1)
	for (k == 1 || uniformBelow(src, k) == 0) && bernoulliGamma() {
		k++
	}
	return k%2 == 1
}

func alwaysTrue() bool { return true }

// bernoulliExpNegOne returns true with probability e^{−1}.
func bernoulliExpNegOne(src Source) bool {
	return bernoulliExpNegFraction(src, alwaysTrue)
}
