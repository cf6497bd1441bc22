package ecdf

import (
	"fmt"
	"math"
)

// CurveAt returns the function i ↦ f[i−1], i = 1..len(f), so that a curve
// held in a slice (an exact ECDF, Private.Curve, a smoothed curve) can be
// passed to Quantile.
func CurveAt(f []float64) func(i int) float64 {
	return func(i int) float64 { return f[i-1] }
}

// QuantileIndex runs Algorithm 1 of dp-ecdf (§4.3, Inv-Ecdf-DP) on the
// grid of n bins: binary search for a bin i with f(i−1) < p ≤ f(i), where
// f(i) is the (private, possibly smoothed) ECDF at τ_i and f(0), f(n) are
// taken as below p and at least p without being evaluated, like a = 0 and
// b = 1 in Algorithm 1. The search stops when the interval is one bin
// wide, i.e. at the grid's precision ψ (the same ψ as the grid of §3.1).
//
// It evaluates f at ⌈log2 n⌉ bins at most. If f is non-decreasing (the
// exact ECDF, or a curve smoothed by dp-ecdf Eq. 3) the result is the
// smallest i with f(i) ≥ p. If it is not (raw F̂ carries noise), binary
// search still ends at a crossing f(i−1) < p ≤ f(i), as the paper notes.
// Evaluating f is post-processing of one release: it costs no budget.
func QuantileIndex(f func(i int) float64, n int, p float64) (int, error) {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return 0, fmt.Errorf("ecdf: probability %g is not in [0, 1]", p)
	}
	if n < 1 {
		return 0, fmt.Errorf("ecdf: number of bins %d is not positive", n)
	}
	lo, hi := 0, n // invariant: f(lo) < p ≤ f(hi), ends unevaluated
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if f(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// Quantile returns the p-quantile of the curve f over grid g: the
// threshold τ_i of the bin i found by Algorithm 1 (QuantileIndex). For
// the exact ECDF this is the grid-restricted inverse
// min{τ_i : F(τ_i) ≥ p}, which is within one bin of the empirical
// quantile inf{x : F(x) ≥ p} and equal to it when the data lie on
// thresholds. Algorithm 1 returns the midpoint of the final interval
// (τ_{i−1}, τ_i]; the right end is returned instead because it is a
// point where f was defined and evaluated, and the exact answer for
// data on the grid (ages, counts, the X_pois data set).
func Quantile(f func(i int) float64, g *Grid, p float64) (float64, error) {
	i, err := QuantileIndex(f, g.Len(), p)
	if err != nil {
		return 0, err
	}
	return g.Threshold(i), nil
}

// Quantiles returns Quantile(f, g, p) for each p in ps.
func Quantiles(f func(i int) float64, g *Grid, ps []float64) ([]float64, error) {
	q := make([]float64, len(ps))
	for j, p := range ps {
		var err error
		if q[j], err = Quantile(f, g, p); err != nil {
			return nil, err
		}
	}
	return q, nil
}
