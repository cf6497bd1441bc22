package noise

import (
	"errors"
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
	words    *wordCache
}

// maxRationalPart bounds the numerator and denominator of a scale, and
// maxLaplaceScale the scale itself, so that Sample's integer arithmetic
// never overflows except with probability below e^{−2^10}. The discrete
// Gaussian bounds only the denominator of σ² by maxRationalPart (its
// arithmetic is in big.Int) and σ by maxLaplaceScale.
const (
	maxRationalPart = 1 << 62
	maxLaplaceScale = 1 << 52
)

// NewDiscreteLaplace returns Lap_Z(scale). The scale must be positive and
// finite, at most 2^52, and its exact binary fraction must have numerator
// and denominator at most 2^62: true of every scale above 2^−10 and of
// every multiple of 2^−62 such as 0.5 or 2^−40. RoundUpScale turns any
// target scale into the least such scale above it.
//
// Its errors match ErrScale (errors.Is).
func NewDiscreteLaplace(scale float64) (*DiscreteLaplace, error) {
	l, err := newDiscreteLaplace(scale)
	if err != nil {
		return nil, scaleError{fmt.Errorf("noise: %w", err)}
	}
	return l, nil
}

// ErrScale is matched by every error of NewDiscreteLaplace and
// NewDiscreteGaussian: a scale or variance that is not positive and
// finite, beyond 2^52, or finer than 2^−62. The text says which and how
// to fix it.
var ErrScale = errors.New("noise scale out of range")

// scaleError is an error of kind ErrScale that keeps the text of err.
type scaleError struct{ err error }

func (e scaleError) Error() string   { return e.err.Error() }
func (e scaleError) Unwrap() []error { return []error{ErrScale, e.err} }

// newDiscreteLaplace is NewDiscreteLaplace without the package prefix.
func newDiscreteLaplace(scale float64) (*DiscreteLaplace, error) {
	r, err := exactFraction("discrete Laplace scale", scale)
	if err != nil {
		return nil, err
	}
	if scale > maxLaplaceScale {
		return nil, fmt.Errorf("discrete Laplace scale %g is above the supported maximum 2^52: use a larger ε or fewer bins", scale)
	}
	return &DiscreteLaplace{scale: scale, num: r.Num().Uint64(), den: r.Denom().Uint64(), words: new(wordCache)}, nil
}

// exactFraction writes a positive finite float64 as the fraction num/den
// in lowest terms and checks den ≤ maxRationalPart; num ≤ 2^53 when
// x ≤ 2^52.
func exactFraction(what string, x float64) (*big.Rat, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
		return nil, fmt.Errorf("%s %v: must be positive and finite", what, x)
	}
	r := new(big.Rat).SetFloat64(x)
	if r.Denom().Cmp(big.NewInt(maxRationalPart)) > 0 {
		return nil, fmt.Errorf("%s %g: its exact binary fraction needs more than 62 bits (a %d-bit denominator): round it up to a multiple of 2^−62 (RoundUpScale)", what, x, r.Denom().BitLen()-1)
	}
	return r, nil
}

// RoundUpScale returns the least positive float64 x ≥ target that is a
// multiple of 2^−62: the least scale (or σ²) at least target that the
// samplers represent exactly (NewDiscreteLaplace, NewDiscreteGaussian).
// Above 2^−10 it is target rounded up to the next float64; below, where
// a float64 can be finer than 2^−62, it is ⌈target·2^62⌉·2^−62, and at
// least 2^−62 (also for a target ≤ 0). Noise of a larger scale than
// needed is still private at the claimed level, so calibrations round
// up, never to nearest. A target beyond the float64 range gives +Inf,
// which the samplers refuse.
func RoundUpScale(target *big.Rat) float64 {
	x, exact := target.Float64()
	if !exact && new(big.Rat).SetFloat64(x).Cmp(target) < 0 {
		x = math.Nextafter(x, math.Inf(1))
	}
	if x >= 0x1p-10 {
		return x // its unit in the last place is at least 2^−62
	}
	k := new(big.Int).Lsh(target.Num(), 62)
	k.Add(k, target.Denom()).Sub(k, big.NewInt(1)).Quo(k, target.Denom()) // ⌈target·2^62⌉ ≤ 2^52
	if k.Sign() <= 0 {
		return 0x1p-62
	}
	return math.Ldexp(float64(k.Uint64()), -62)
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
