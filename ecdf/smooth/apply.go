package smooth

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// Methods are the smoothing methods Apply knows, in the order --help lists them.
var Methods = []string{"none", "l1", "l2", "tree-l2"}

// Apply post-processes the raw private curve f (F̂ normalised by n) with the
// named method: "none" (a copy), "l1" (pointwiseL1), "l2" (PointwiseL2) or
// "tree-l2" (treeL2 over m's noise pattern, default options; m is needed
// only for this method). Smoothing is post-processing: the result has the
// ε (δ) and neighbouring relation of the release of f.
//
// The public data size n is not an argument: every method's minimiser is
// the same whether F̂ is expressed in counts or normalised by n (see the
// package documentation), so f in ECDF units is all that is needed.
//
// Every smoothed curve is exactly non-decreasing: the few-ulp decreases
// that floating-point block means (l2) or the solver's 1e-9 tolerance
// (tree-l2) can leave are lifted by a running maximum, so consumers that
// demand monotone curves (package roc) can rely on it.
func Apply(method string, f []float64, m mechanism.Mechanism) ([]float64, error) {
	g, err := applyMethod(method, f, m)
	if err != nil {
		return nil, fmt.Errorf("smooth: %w", err)
	}
	return g, nil
}

// applyMethod is Apply without the package prefix.
func applyMethod(method string, f []float64, m mechanism.Mechanism) ([]float64, error) {
	if err := checkCurve(f); err != nil {
		return nil, err
	}
	switch method {
	case "none":
		return slices.Clone(f), nil
	case "l1":
		return nonDecreasing(pointwiseL1(f)), nil
	case "l2":
		return PointwiseL2(f), nil
	case "tree-l2":
		g, st, err := treeL2(f, m, treeOptions{})
		if err != nil {
			return nil, err
		}
		if !st.Converged {
			return nil, fmt.Errorf("smoothing tree-l2 did not converge in %d iterations (violation %.3g, gap %.3g); use l2", st.Iterations, st.Violation, st.Gap)
		}
		return nonDecreasing(g), nil
	}
	return nil, fmt.Errorf("unknown smoothing method %q (valid: %s)", method, strings.Join(Methods, ", "))
}

// checkCurve rejects an empty curve and non-finite points.
func checkCurve(f []float64) error {
	if len(f) == 0 {
		return errors.New("smoothing an empty private curve: need at least one point")
	}
	for i, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("point %d of the private curve is %g, not a finite number", i+1, v)
		}
	}
	return nil
}

// nonDecreasing lifts every point to at least its predecessor, g[i] =
// max(g[i], g[i−1]): on a smoothed curve it moves points only by the
// rounding-level decreases of its computation.
func nonDecreasing(g []float64) []float64 {
	for i := 1; i < len(g); i++ {
		g[i] = max(g[i], g[i-1])
	}
	return g
}

// ApplyTop is Apply for a curve whose last point is known to be 1: F at
// the grid's top, public under replace-one, where n is public and every
// counted record lies in one of the grid's bins, so the last prefix is n.
// That point is fixed at 1 instead of smoothed with the others:
//
//   - "l1" and "l2": the exact minimiser under the constraint z_N = 1,
//     which is the method's fit of f_1..f_{N−1} (bounded above by
//     z_N = 1, as it already is) followed by 1;
//   - "tree-l2": Apply's curve with its last point raised to 1 (it stays
//     in [0, 1] and non-decreasing; the other points are not refitted
//     for the constraint, as the noise couples them);
//   - "none": f unchanged, the raw curve.
//
// Post-processing with public knowledge: the guarantee of f's release.
func ApplyTop(method string, f []float64, m mechanism.Mechanism) ([]float64, error) {
	if err := checkCurve(f); err != nil {
		return nil, fmt.Errorf("smooth: %w", err)
	}
	var g []float64
	var err error
	switch n := len(f); {
	case method == "none":
		return slices.Clone(f), nil
	case (method == "l1" || method == "l2") && n > 1:
		g, err = Apply(method, f[:n-1], m)
		g = append(g, 1)
	case method == "l1" || method == "l2":
		g = []float64{1}
	default:
		g, err = Apply(method, f, m)
		if err == nil {
			g[n-1] = 1
		}
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}
