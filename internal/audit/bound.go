package audit

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the one-sided confidence of the lower bound: each of the
// two error rates is bounded at 1 − (1 − Confidence)/2, so both bounds
// hold together with probability at least Confidence (union bound).
const Confidence = 0.95

// rateLevel is the one-sided level of each error-rate bound.
const rateLevel = 1 - (1-Confidence)/2

// clopperPearsonUpper returns the exact one-sided upper confidence bound
// at level on a binomial proportion from k successes in n trials
// (Clopper and Pearson 1934): the level-quantile of Beta(k+1, n−k), and
// 1 when k = n.
func clopperPearsonUpper(k, n int, level float64) float64 {
	if k >= n {
		return 1
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(level)
}

// wilsonUpper is the Wilson score upper bound at rateLevel: a cheap,
// close stand-in for clopperPearsonUpper used only to choose the
// threshold.
var selectionZ = 3.0

func wilsonUpper(k, n int) float64 {
	z := selectionZ
	p, nf := float64(k)/float64(n), float64(n)
	centre := p + z*z/(2*nf)
	spread := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return min((centre+spread)/(1+z*z/nf), 1)
}

// epsilonLowerBound returns the ε that a test with false-positive rate at
// most fpr and false-negative rate at most fnr certifies at δ: every
// (ε, δ)-DP mechanism has fpr + e^ε·fnr ≥ 1 − δ and fnr + e^ε·fpr ≥ 1 − δ
// (Kairouz, Oh and Viswanath 2015), so
//
//	ε ≥ max{ln((1 − δ − fnr)/fpr), ln((1 − δ − fpr)/fnr)},
//
// floored at 0 (Jagielski, Ullman and Oprea 2020, §4; Nasr et al. 2021).
func epsilonLowerBound(fpr, fnr, delta float64) float64 {
	lb := 0.0
	if num := 1 - delta - fnr; num > 0 && fpr > 0 {
		lb = max(lb, math.Log(num/fpr))
	}
	if num := 1 - delta - fpr; num > 0 && fnr > 0 {
		lb = max(lb, math.Log(num/fnr))
	}
	return lb
}

// Estimate is the outcome of one distinguishing test on the held-out
// half of the trials: the test says "D′" when the statistic is at least
// Threshold. FPR and FNR are the observed error rates, FPRUpper and
// FNRUpper their Clopper–Pearson upper bounds (each at 97.5 %), and
// LowerBound the ε they certify (epsilonLowerBound) with confidence 95 %.
type Estimate struct {
	Threshold  float64 `json:"threshold"`
	FPR        float64 `json:"fpr"`
	FNR        float64 `json:"fnr"`
	FPRUpper   float64 `json:"fpr_upper"`
	FNRUpper   float64 `json:"fnr_upper"`
	LowerBound float64 `json:"lower_bound"`
}

// estimate chooses the threshold on the first halves of the statistics
// s0 (under D) and s1 (under D′) — the one whose Wilson bounds certify
// the largest ε — and evaluates it with exact Clopper–Pearson bounds on
// the second halves, which played no part in the choice.
func estimate(s0, s1 []float64, delta float64) Estimate {
	h0, h1 := len(s0)/2, len(s1)/2
	tau := chooseThreshold(s0[:h0], s1[:h1], delta)
	fp, fn := countErrors(s0[h0:], s1[h1:], tau)
	n0, n1 := len(s0)-h0, len(s1)-h1
	e := Estimate{
		Threshold: tau,
		FPR:       float64(fp) / float64(n0),
		FNR:       float64(fn) / float64(n1),
		FPRUpper:  clopperPearsonUpper(fp, n0, rateLevel),
		FNRUpper:  clopperPearsonUpper(fn, n1, rateLevel),
	}
	e.LowerBound = epsilonLowerBound(e.FPRUpper, e.FNRUpper, delta)
	return e
}

// countErrors counts the false positives (s0 ≥ τ) and false negatives
// (s1 < τ) of the threshold τ.
func countErrors(s0, s1 []float64, tau float64) (fp, fn int) {
	for _, s := range s0 {
		fp += b2i(s >= tau)
	}
	for _, s := range s1 {
		fn += b2i(s < tau)
	}
	return fp, fn
}

// chooseThreshold returns the observed value τ maximising the ε certified
// by the Wilson bounds of the test "s ≥ τ", sweeping the sorted values
// once.
func chooseThreshold(s0, s1 []float64, delta float64) float64 {
	a, b := slices.Sorted(slices.Values(s0)), slices.Sorted(slices.Values(s1))
	n0, n1 := len(a), len(b)
	best, bestTau := -1.0, math.Inf(1)
	i, j := 0, 0 // a[:i] < τ, b[:j] < τ
	for i < n0 || j < n1 {
		tau := math.Inf(1)
		if i < n0 {
			tau = a[i]
		}
		if j < n1 {
			tau = min(tau, b[j])
		}
		if lb := epsilonLowerBound(wilsonUpper(n0-i, n0), wilsonUpper(j, n1), delta); lb > best {
			best, bestTau = lb, tau
		}
		for i < n0 && a[i] == tau {
			i++
		}
		for j < n1 && b[j] == tau {
			j++
		}
	}
	return bestTau
}
