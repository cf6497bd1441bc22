package mechanism

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestClassicalGaussianSigma(t *testing.T) {
	got, err := classicalGaussianSigma(2, 0.5, 1e-5)
	if want := 2 * math.Sqrt(2*math.Log(1.25e5)) / 0.5; err != nil || math.Abs(got-want) > 1e-12*want {
		t.Errorf("σ = %v, %v; want %v", got, err, want)
	}
	for _, c := range []struct{ s, e, d float64 }{{1, 1, 1e-5}, {1, 0.5, 0}, {0, 0.5, 1e-5}, {1, -1, 1e-5}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if _, err := classicalGaussianSigma(c.s, c.e, c.d); err == nil {
				t.Errorf("ClassicalGaussianSigma(%v, %v, %v) accepted", c.s, c.e, c.d)
			}
		})
	}
}

// privacyLossDelta integrates δ(ε) = E[(1 − e^{ε−Λ})₊] over the
// privacy loss Λ ~ N(μ, 2μ), μ = Δ²/(2σ²), of the Gaussian mechanism: an
// independent computation of GaussianDelta.
func privacyLossDelta(l2, sigma, eps float64) float64 {
	mu := l2 * l2 / (2 * sigma * sigma)
	sd := math.Sqrt(2 * mu)
	const steps = 200000
	lo, hi := eps, mu+40*sd
	h := (hi - lo) / steps
	var s float64
	for i := 0; i <= steps; i++ {
		x := lo + float64(i)*h
		w := 1.0
		if i == 0 || i == steps {
			w = 0.5
		}
		density := math.Exp(-(x-mu)*(x-mu)/(2*sd*sd)) / (sd * math.Sqrt(2*math.Pi))
		s += w * (1 - math.Exp(eps-x)) * density
	}
	return s * h
}

func TestAnalyticGaussianSigma(t *testing.T) {
	// Balle and Wang's reference implementation gives σ ≈ 3.7306316 for
	// ε = 1, δ = 1e−5, Δ₂ = 1 (classical: 4.84).
	if s, err := analyticGaussianSigma(1, 1, 1e-5); err != nil || math.Abs(s-3.7306316) > 1e-6 {
		t.Errorf("AnalyticGaussianSigma(1, 1, 1e-5) = %v, %v; want 3.7306316", s, err)
	}
	for _, c := range []struct{ l2, eps, delta float64 }{{1, 1, 1e-5}, {3, 0.1, 1e-9}, {2, 0.5, 1e-6}, {1, 4, 1e-3}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			s, err := analyticGaussianSigma(c.l2, c.eps, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if d := GaussianDelta(c.l2, s, c.eps); d > c.delta || d < c.delta*(1-1e-9) {
				t.Errorf("%+v: δ(σ*) = %v, want the target %v at the boundary", c, d, c.delta)
			}
			if d := GaussianDelta(c.l2, s*(1-1e-9), c.eps); d <= c.delta {
				t.Errorf("%+v: a smaller σ also meets δ", c)
			}
			if got := privacyLossDelta(c.l2, s, c.eps); math.Abs(got-c.delta) > 1e-4*c.delta {
				t.Errorf("%+v: integrated privacy loss gives δ = %v, want %v", c, got, c.delta)
			}
			if cl, err := classicalGaussianSigma(c.l2, c.eps, c.delta); err == nil && s > cl {
				t.Errorf("%+v: analytic σ %v above classical %v", c, s, cl)
			}
		})
	}
}

func TestZCDP(t *testing.T) {
	for _, c := range []struct{ eps, delta float64 }{{1, 1e-9}, {0.1, 1e-6}, {2, 1e-5}, {0.5, 1e-12}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			rho, err := zcdpRho(c.eps, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if d := zcdpDelta(rho, c.eps); d > c.delta || d < c.delta*(1-1e-6) {
				t.Errorf("%+v: ZCDPDelta(ρ*) = %v, want the target", c, d)
			}
			// The classical conversion ε = ρ + 2√(ρ ln(1/δ)) is looser.
			if classic := math.Pow(math.Sqrt(math.Log(1/c.delta)+c.eps)-math.Sqrt(math.Log(1/c.delta)), 2); classic > rho {
				t.Errorf("%+v: ρ* %v below the classical conversion's %v", c, rho, classic)
			}
			// A Gaussian of sensitivity 1 and σ² = 1/(2ρ) is ρ-zCDP, and its
			// exact δ cannot exceed what any zCDP conversion claims.
			if exact := GaussianDelta(1, math.Sqrt(1/(2*rho)), c.eps); exact > c.delta {
				t.Errorf("%+v: exact Gaussian δ %v exceeds the zCDP bound %v", c, exact, c.delta)
			}
		})
	}
	if _, err := zcdpRho(1, 1); err == nil || !strings.Contains(err.Error(), "delta 1") {
		t.Errorf("ZCDPRho(1, 1) error %v", err)
	}
}

// TestDiscreteGaussianSigma2 checks that σ² is 6/(2ρ) rounded up: the
// least float64 with σ²·2ρ ≥ 6 in exact arithmetic.
func TestDiscreteGaussianSigma2(t *testing.T) {
	rho, _ := zcdpRho(1, 1e-9)
	got, _ := discreteGaussianSigma2Float(6, 1, 1e-9)
	twoRho := new(big.Rat).Mul(ratOf(rho), big.NewRat(2, 1))
	if new(big.Rat).Mul(ratOf(got), twoRho).Cmp(big.NewRat(6, 1)) < 0 ||
		new(big.Rat).Mul(ratOf(math.Nextafter(got, 0)), twoRho).Cmp(big.NewRat(6, 1)) >= 0 {
		t.Errorf("σ² = %v, want 6/(2ρ) = %v rounded up", got, 6/(2*rho))
	}
	if _, err := discreteGaussianSigma2Float(0, 1, 1e-9); err == nil {
		t.Error("zero sensitivity accepted")
	}
}

// TestLaplaceL2 checks Lemma 21 (the root solves ε = a²/2 + a√(2 ln 1/δ)),
// Theorem 3 at that scale, and Corollary 22's limit: the ℓ2 Laplace
// variance 2(Δ₂/a)² over the Gaussian 2 ln(1/δ)Δ₂²/ε² tends to 2 as ε → 0.
func TestLaplaceL2(t *testing.T) {
	for _, c := range []struct{ l2, eps, delta float64 }{{1, 1, 1e-9}, {3, 0.1, 1e-6}, {2, 1e-6, 1e-5}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			scale, err := laplaceL2Scale(c.l2, c.eps, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			a := c.l2 / scale
			if got := a*a/2 + a*math.Sqrt(2*math.Log(1/c.delta)); math.Abs(got-c.eps) > 1e-12*c.eps {
				t.Errorf("%+v: a = %v gives ε = %v", c, a, got)
			}
			if got := laplaceTheorem3Epsilon(100*c.l2, c.l2, scale, c.delta); math.Abs(got-c.eps) > 1e-12*c.eps {
				t.Errorf("%+v: Theorem 3 ε = %v", c, got)
			}
		})
	}
	scale, _ := laplaceL2Scale(1, 1e-8, 1e-6)
	ratio := 2 * scale * scale / (2 * math.Log(1e6) / 1e-16)
	if math.Abs(ratio-2) > 1e-6 {
		t.Errorf("Corollary 22: variance ratio %v at ε → 0, want 2", ratio)
	}
	if got := laplaceTheorem3Epsilon(4, 2, 100, 1e-9); got != 0.04 {
		t.Errorf("Theorem 3 with a small Δ₁: ε = %v, want Δ₁/λ = 0.04", got)
	}
	if _, err := laplaceL2Scale(1, 2, 1e-6); err == nil {
		t.Error("ε > 1 accepted by Lemma 21")
	}
}

func TestCascadeTheorem38(t *testing.T) {
	// Theorem 3.9: M = 1 + L/3 gives (2/ε² + 2L/(3ε²))·log(2/δ).
	for _, L := range []int{1, 10, 20} {
		got := cascadeTheorem38Sigma2(cascadeMahalanobisFloat(L, AddRemove), 0.5, 1e-6)
		want := (2/0.25 + 2*float64(L)/(3*0.25)) * math.Log(2e6)
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("L=%d: %v, Theorem 3.9 %v", L, got, want)
		}
	}
}
