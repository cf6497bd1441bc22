package hierarchy

import "math"

// MultiplicativeError is the error of estimate y′ of the true count y
// after a multiplicative slack of α·y is forgiven: max(|y′ − y| − α·y, 0)
// (the integrand of Definition 1.4 of counting-on-trees).
func MultiplicativeError(alpha, truth, estimate float64) float64 {
	return max(math.Abs(estimate-truth)-alpha*truth, 0)
}

// MRMSE is the α-multiplicative root mean squared error of Definition 1.4,
// α-mRMSE(y′, y) = √E[max(|y′ − y| − α·y, 0)²], of the draws estimates of
// an estimator of truth: the expectation is their mean (a Monte-Carlo
// estimate, or the exact value when estimates is the estimator's whole
// support with equal weights). α = 0 gives the root mean squared error.
// It is 0 for no estimates.
func MRMSE(alpha, truth float64, estimates []float64) float64 {
	if len(estimates) == 0 {
		return 0
	}
	s := 0.0
	for _, e := range estimates {
		m := MultiplicativeError(alpha, truth, e)
		s += m * m
	}
	return math.Sqrt(s / float64(len(estimates)))
}

// SmoothedRelativeError is the smoothed relative error of Appendix B of
// counting-on-trees, E[|y′ − y|] / max(y, τ), with smoothing factor τ > 0,
// over the draws estimates of an estimator of truth.
func SmoothedRelativeError(tau, truth float64, estimates []float64) float64 {
	if len(estimates) == 0 {
		return 0
	}
	s := 0.0
	for _, e := range estimates {
		s += math.Abs(e - truth)
	}
	return s / float64(len(estimates)) / max(truth, tau)
}

// SmoothedBound is Lemma B.1 of counting-on-trees: an estimator whose
// α-mRMSE is mrmse has smoothed relative error at most α + mrmse/τ.
// Proof: |y′ − y| ≤ α·y + max(|y′ − y| − α·y, 0), so by Jensen
// E|y′ − y| ≤ α·y + mrmse, and α·y/max(y, τ) ≤ α, mrmse/max(y, τ) ≤ mrmse/τ.
func SmoothedBound(alpha, tau, mrmse float64) float64 { return alpha + mrmse/tau }
