package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedecdf/fedecdf/hosmer"
)

// Settings of HosmerPower: the level of the test, the power asked, the
// Monte-Carlo draws behind it and the intercept shift beyond which the
// test is called weak.
const (
	powerLevel = 0.05
	powerGoal  = 0.8
	powerDraws = 4000
	// weakShift is a calibration-intercept shift of 0.5 on the logit
	// scale (odds ratio 1.65): a test that cannot detect that with 80 %
	// power is weak.
	weakShift = 0.5
)

// HosmerPower says what the noise-aware Hosmer–Lemeshow test of a
// release could detect (JSON schema in docs/json.md): the smallest shift
// a of the calibration intercept (every group's true rate
// expit(logit(m_g) + a) against its expected m_g) that it detects with
// probability Power at level Level, from the released group sizes and
// expected rates and the public noise law (hosmerPower).
type HosmerPower struct {
	Level float64 `json:"level"`
	Power float64 `json:"power"`
	// InterceptShift is a (logit scale, the larger of the two
	// directions), OddsRatio e^a; both null when no shift up to 20 (odds
	// ratio 5·10⁸) reaches the power: the noise swamps any
	// miscalibration of the intercept.
	InterceptShift *float64 `json:"detectable_intercept_shift"`
	OddsRatio      *float64 `json:"detectable_odds_ratio"`
	// H is the noise-free statistic expected at that shift, G + λ: a
	// data set whose exact H is below it is likely to pass unnoticed;
	// null with InterceptShift.
	H *float64 `json:"detectable_h"`
	// NoiseInflation is the mean over groups of w_g, the factor by which
	// the noise multiplies the variance of O_1 − E_1 (1 without noise).
	NoiseInflation float64 `json:"noise_inflation"`
	// Weak is set when InterceptShift exceeds 0.5 (odds ratio 1.65).
	Weak bool `json:"weak"`
}

// hosmerPower returns the power statement of groups whose O_1 has s.d.
// sd[g] about E_1 under calibration (observedSD: noise and sampling):
// with m_g = E_1/size and s_g² = size·m_g(1 − m_g) the sampling
// variance, each group adds (√w_g·Z_g + μ_g)² to H, where
// w_g = sd_g²/s_g² and μ_g = size·(r_g − m_g)/s_g under the shift
// (H's terms (O − E)²/E_1 + (O − E)²/E_0 = (O − E)²/s_g²). The test's
// critical value is the 95 % quantile of Σ w_g Z_g² (the null of the
// noise-aware test, a model not fitted on these data), and the shift
// is found by bisection over powerDraws common normal draws from a
// fixed public seed. nil with fewer than 3 usable groups.
func hosmerPower(groups []hosmer.Group, sd []float64) *HosmerPower {
	var w, m, size []float64
	for k, g := range groups {
		if g.Size < 1 || k >= len(sd) {
			continue
		}
		mg := min(max(g.Expected/g.Size, 1e-3), 1-1e-3)
		s2 := g.Size * mg * (1 - mg)
		w, m, size = append(w, max(sd[k]*sd[k]/s2, 1)), append(m, mg), append(size, g.Size)
	}
	if len(w) < 3 {
		return nil
	}
	mu := func(a float64) []float64 {
		u := make([]float64, len(m))
		for g := range m {
			r := 1 / (1 + math.Exp(-(math.Log(m[g]/(1-m[g])) + a)))
			u[g] = size[g] * (r - m[g]) / math.Sqrt(size[g]*m[g]*(1-m[g]))
		}
		return u
	}
	a := max(minShift(w, mu, 1), minShift(w, mu, -1))
	p := &HosmerPower{Level: powerLevel, Power: powerGoal, Weak: !(a <= weakShift)}
	if !math.IsInf(a, 1) {
		h, or := float64(len(w)), math.Exp(a)
		for _, v := range mu(a) {
			h += v * v
		}
		p.InterceptShift, p.OddsRatio, p.H = &a, &or, &h
	}
	for _, v := range w {
		p.NoiseInflation += v / float64(len(w))
	}
	return p
}

// minShift returns the smallest a ≥ 0 (times sign) at which
// H = Σ_g (√w_g·Z_g + μ_g(sign·a))² exceeds the 1 − powerLevel quantile
// of its a = 0 law with probability powerGoal, over powerDraws common
// draws of Z (so that the power is monotone in a); +Inf beyond a = 20.
func minShift(w []float64, mu func(float64) []float64, sign float64) float64 {
	rng := rand.New(rand.NewPCG(0x4857, 0x706f776572)) // fixed public seed
	z := make([][]float64, powerDraws)
	for b := range z {
		z[b] = make([]float64, len(w))
		for g := range w {
			z[b][g] = math.Sqrt(w[g]) * rng.NormFloat64()
		}
	}
	h := func(u []float64) []float64 {
		out := make([]float64, len(z))
		for b, zb := range z {
			for g, v := range zb {
				out[b] += (v + u[g]) * (v + u[g])
			}
		}
		return out
	}
	null := h(make([]float64, len(w)))
	slices.Sort(null)
	crit := null[int(math.Ceil((1-powerLevel)*float64(len(null))))-1]
	power := func(a float64) float64 {
		var k int
		for _, v := range h(mu(sign * a)) {
			if v > crit {
				k++
			}
		}
		return float64(k) / float64(len(z))
	}
	lo, hi := 0.0, 20.0
	if power(hi) < powerGoal {
		return math.Inf(1)
	}
	for hi-lo > 1e-4*max(hi, 1) {
		if mid := (lo + hi) / 2; power(mid) >= powerGoal {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Describe says, for text output, what the test could detect, and
// warns when that is weak.
func (p *HosmerPower) Describe() string {
	if p == nil {
		return ""
	}
	s := fmt.Sprintf("80 %% power at level %.2g against no calibration-intercept shift (noise multiplies the variance of O − E by %.3g)", p.Level, p.NoiseInflation)
	if p.InterceptShift != nil {
		s = fmt.Sprintf("80 %% power at level %.2g against a calibration-intercept shift of ±%.3g on the logit scale (odds ratio %.3g), a noise-free H of about %.4g (noise multiplies the variance of O − E by %.3g)",
			p.Level, *p.InterceptShift, *p.OddsRatio, *p.H, p.NoiseInflation)
	}
	if p.Weak {
		s += "; warning: weak test at this n and ε — a p-value ≥ 0.05 is no evidence of calibration"
	}
	return s
}
