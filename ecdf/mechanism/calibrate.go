package mechanism

import (
	"fmt"
	"math"
	"math/big"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// This file holds the calibrations of the mechanisms. Each takes a
// sensitivity and the target (ε, δ) and returns a noise parameter; each
// is checked in calibrate_test.go against its defining condition.
//
// Rounding. Every noise parameter is rounded up, never to nearest: the
// Laplace scale b of a sensitivity Δ at ε is the least exactly sampled
// scale with b·ε ≥ Unit·Δ, checked in exact rational arithmetic
// (noise.RoundUpScale), and the Gaussian σ² the least with
// σ²·2ρ ≥ Unit²·M, so the realised ε never exceeds the claim; and a
// scale finer than the samplers represent (2^−62) becomes 2^−62 (more
// noise, still ε-DP), so a huge ε gives noise that is 0 except with
// negligible probability instead of an error.

// ratOf returns x as an exact rational.
func ratOf(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }

// ratUnit returns the rational u (u = Params.unit()).
func ratUnit(u uint64) *big.Rat { return new(big.Rat).SetInt(new(big.Int).SetUint64(u)) }

// laplaceScale returns the node scale of a discrete Laplace noise for ℓ1
// sensitivity sens (in units of one record) at ε: the least exactly
// sampled b with b·ε ≥ unit·sens.
func laplaceScale(unit uint64, sens, epsilon *big.Rat) float64 {
	target := new(big.Rat).Mul(ratUnit(unit), sens)
	return noise.RoundUpScale(target.Quo(target, epsilon))
}

// gaussianSigma2 returns the variance parameter of discrete Gaussian
// noise for squared ℓ2 sensitivity l2Squared (in units of one record)
// at zCDP parameter ρ: the least exactly sampled σ² with
// σ²·2ρ ≥ unit²·l2Squared.
func gaussianSigma2(unit uint64, l2Squared *big.Rat, rho float64) float64 {
	u := ratUnit(unit)
	target := new(big.Rat).Mul(l2Squared, u)
	target.Mul(target, u)
	if math.IsInf(rho, 1) {
		return noise.RoundUpScale(new(big.Rat)) // any σ² is ∞-zCDP: the finest
	}
	return noise.RoundUpScale(target.Quo(target, new(big.Rat).Mul(ratOf(rho), big.NewRat(2, 1))))
}

// checkApprox validates an (ε, δ) target with δ in (0, 1).
func checkApprox(epsilon, delta float64) error {
	if math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon <= 0 {
		return fmt.Errorf("epsilon %v: must be positive and finite", epsilon)
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return fmt.Errorf("delta %v: must be in (0, 1)", delta)
	}
	return nil
}

func checkSensitivity(what string, s float64) error {
	if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
		return fmt.Errorf("%s %v: must be positive and finite", what, s)
	}
	return nil
}

// classicalGaussianSigma returns σ = Δ₂·√(2 ln(1.25/δ))/ε, the Gaussian
// mechanism of Dwork and Roth (Thm A.1; count-on-your-elders Lemma 25),
// (ε, δ)-DP for ε in (0, 1).
func classicalGaussianSigma(l2Sensitivity, epsilon, delta float64) (float64, error) {
	if err := checkSensitivity("ℓ2 sensitivity", l2Sensitivity); err != nil {
		return 0, err
	}
	if err := checkApprox(epsilon, delta); err != nil {
		return 0, err
	}
	if epsilon >= 1 {
		return 0, fmt.Errorf("epsilon %v: the classical Gaussian mechanism needs ε < 1", epsilon)
	}
	return l2Sensitivity * math.Sqrt(2*math.Log(1.25/delta)) / epsilon, nil
}

// GaussianDelta returns the exact δ(ε) of the continuous Gaussian
// mechanism with noise N(0, σ²) and ℓ2 sensitivity Δ₂ (Balle and Wang
// 2018, Thm 8):
//
//	δ = Φ(Δ₂/(2σ) − εσ/Δ₂) − e^ε·Φ(−Δ₂/(2σ) − εσ/Δ₂).
func GaussianDelta(l2Sensitivity, sigma, epsilon float64) float64 {
	a, b := l2Sensitivity/(2*sigma), epsilon*sigma/l2Sensitivity
	return normalCDF(a-b) - math.Exp(epsilon)*normalCDF(-a-b)
}

// normalCDF is Φ(x) = erfc(−x/√2)/2.
func normalCDF(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }

// analyticGaussianSigma returns the least σ whose GaussianDelta is at
// most δ (the analytic Gaussian mechanism of Balle and Wang 2018,
// Algorithm 1, by bisection; valid for every ε > 0), up to a relative
// 1e−12 (rounded up).
func analyticGaussianSigma(l2Sensitivity, epsilon, delta float64) (float64, error) {
	if err := checkSensitivity("ℓ2 sensitivity", l2Sensitivity); err != nil {
		return 0, err
	}
	if err := checkApprox(epsilon, delta); err != nil {
		return 0, err
	}
	ok := func(s float64) bool { return GaussianDelta(l2Sensitivity, s, epsilon) <= delta }
	return leastSatisfying(ok, l2Sensitivity), nil
}

// leastSatisfying returns the least x > 0 (relative precision 1e−12,
// rounded up) with ok(x), for ok monotone (false below, true above),
// starting the search at guess.
func leastSatisfying(ok func(float64) bool, guess float64) float64 {
	lo, hi := guess, guess
	for ok(lo) {
		lo /= 2
	}
	for !ok(hi) {
		hi *= 2
	}
	for hi-lo > 1e-12*hi {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// zcdpDelta returns the δ at which ρ-zCDP implies (ε, δ)-DP, by the
// conversion of Canonne, Kamath and Steinke 2020 (Cor. 13, valid for any
// ρ-zCDP mechanism):
//
//	δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1 − 1/α)^α,
//
// minimised numerically over α (relative precision ~1e−9 in α).
func zcdpDelta(rho, epsilon float64) float64 {
	logDelta := func(u float64) float64 { // α = 1 + e^u
		am1 := math.Exp(u)
		alpha := 1 + am1
		// log(1 − 1/α) = u − log α, exact near α = 1.
		return am1*(alpha*rho-epsilon) - u + alpha*(u-math.Log1p(am1))
	}
	// The objective is convex in α; a grid bracket then golden section.
	best := -40.0
	for u := -40.0; u <= 40; u += 0.25 {
		if logDelta(u) < logDelta(best) {
			best = u
		}
	}
	lo, hi := best-0.25, best+0.25
	const phi = 0.6180339887498949
	for hi-lo > 1e-10 {
		x1, x2 := hi-phi*(hi-lo), lo+phi*(hi-lo)
		if logDelta(x1) < logDelta(x2) {
			hi = x2
		} else {
			lo = x1
		}
	}
	return math.Min(1, math.Exp(logDelta((lo+hi)/2)))
}

// zcdpRho returns the largest ρ (relative precision 1e−12, rounded
// down) such that every ρ-zCDP mechanism is (ε, δ)-DP by zcdpDelta.
func zcdpRho(epsilon, delta float64) (float64, error) {
	if err := checkApprox(epsilon, delta); err != nil {
		return 0, err
	}
	// ρ ↦ zcdpDelta(ρ, ε) is increasing; bisect on 1/ρ, then round 1/x
	// down so that ρ ≤ 1/x exactly.
	inv := leastSatisfying(func(x float64) bool { return zcdpDelta(1/x, epsilon) <= delta }, 1/epsilon)
	rho := 1 / inv
	if new(big.Rat).Mul(ratOf(rho), ratOf(inv)).Cmp(big.NewRat(1, 1)) > 0 {
		rho = math.Nextafter(rho, 0)
	}
	return rho, nil
}

// discreteGaussianSigma2Float returns the variance parameter σ² of discrete
// Gaussian noise N_Z(0, σ²) (independent per coordinate, unit-scaled)
// for a query whose integer shifts have ‖χ‖₂² ≤ l2Squared: each
// coordinate is χ_j²/(2σ²)-zCDP (CKS20 Thm 4), they add up to
// ρ = l2Squared/(2σ²), and σ² = l2Squared/(2·zcdpRho(ε, δ)), rounded
// up to an exactly sampled value (noise.RoundUpScale).
func discreteGaussianSigma2Float(l2Squared, epsilon, delta float64) (float64, error) {
	if err := checkSensitivity("squared ℓ2 sensitivity", l2Squared); err != nil {
		return 0, err
	}
	return discreteGaussianSigma2(1, ratOf(l2Squared), epsilon, delta)
}

// discreteGaussianSigma2 is discreteGaussianSigma2 for an exact squared
// sensitivity l2Squared and Params.Unit unit.
func discreteGaussianSigma2(unit uint64, l2Squared *big.Rat, epsilon, delta float64) (float64, error) {
	rho, err := zcdpRho(epsilon, delta)
	if err != nil {
		return 0, err
	}
	return gaussianSigma2(unit, l2Squared, rho), nil
}

// laplaceL2Scale returns the scale Δ₂/a_{ε,δ} of count-on-your-elders
// Lemma 21 (the ℓ2 Laplace mechanism), with
//
//	a_{ε,δ} = √(2 ln(1/δ))·(√(1 + ε/ln(1/δ)) − 1),
//
// the positive root of ε = a²/2 + a·√(2 ln(1/δ)): Laplace noise of this
// scale on every coordinate is (ε, δ)-DP for ε, δ in (0, 1). The proof
// composes per-coordinate ε_j = |χ_j|/scale guarantees (Lemma 20), so it
// holds for the discrete Laplace on integer shifts as well. The scale
// is rounded up: a, computed in floating point to a few units in the
// last place, is first lowered by a relative 2^−50, and the scale is the
// least float64 with scale·a ≥ Δ₂ exactly, so the realised ε at this
// scale is at most ε.
func laplaceL2Scale(l2Sensitivity, epsilon, delta float64) (float64, error) {
	if err := checkSensitivity("ℓ2 sensitivity", l2Sensitivity); err != nil {
		return 0, err
	}
	if err := checkApprox(epsilon, delta); err != nil {
		return 0, err
	}
	if epsilon > 1 {
		return 0, fmt.Errorf("epsilon %v: Lemma 21 needs ε ≤ 1", epsilon)
	}
	l := math.Log(1 / delta)
	x := epsilon / l
	a := math.Sqrt(2*l) * x / (math.Sqrt(1+x) + 1) // √(1+x) − 1 without cancellation
	a *= 1 - 0x1p-50
	scale := l2Sensitivity / a
	if new(big.Rat).Mul(ratOf(scale), ratOf(a)).Cmp(ratOf(l2Sensitivity)) < 0 {
		scale = math.Nextafter(scale, math.Inf(1))
	}
	return scale, nil
}

// sqrtUp returns the least float64 s with s² ≥ n.
func sqrtUp(n int) float64 {
	s := math.Sqrt(float64(n))
	if r := ratOf(s); r.Mul(r, r).Cmp(big.NewRat(int64(n), 1)) < 0 {
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}

// laplaceTheorem3Epsilon returns the ε of count-on-your-elders Theorem 3
// for Laplace noise of scale λ on a query of sensitivities Δ₁, Δ₂:
//
//	ε = min{Δ₁/λ, (Δ₂/λ)·(Δ₂/(2λ) + √(2 ln(1/δ)))}.
func laplaceTheorem3Epsilon(l1Sensitivity, l2Sensitivity, scale, delta float64) float64 {
	r := l2Sensitivity / scale
	return math.Min(l1Sensitivity/scale, r*(r/2+math.Sqrt(2*math.Log(1/delta))))
}

// cascadeTheorem38Sigma2 returns σ² = 2·M·ln(2/δ)/ε² of cascade-sampling
// Theorem 3.8 (ε ≤ 1, δ ≤ 1/2), where M = max ΔᵀC⁻¹Δ over neighbours
// (the paper's ‖diag(C⁻¹)‖∞ for unit add/remove changes; M = 1 + L/3
// gives Theorem 3.9). It is a reference for the continuous Gaussian;
// Cascade calibrates its discrete noise with discreteGaussianSigma2.
func cascadeTheorem38Sigma2(m, epsilon, delta float64) float64 {
	return 2 * m * math.Log(2/delta) / (epsilon * epsilon)
}
