package roc

import (
	"fmt"
	"math"
	"slices"
)

// AreaError returns ∫_0^1 |ROC_a(x) − ROC_b(x)| dx over the false
// positive rate x: the area between two curves, the ROC error of dp-ecdf
// §6.5 (the 1-norm difference, i.e. the area of the symmetric difference
// of the regions under the two curves).
//
// Each curve is read as the piecewise-linear function through its points
// (the curve whose area AUC computes). Where several points share an FPR
// the curve has a vertical segment there; it then takes the lowest of
// their TPRs as its value just left of that FPR and the highest just
// right of it, which is the only reading for a monotone curve. Between
// consecutive breakpoints of either curve both are linear, so the
// integral is computed exactly on each piece (splitting it where the
// curves cross), with no approximating grid.
//
// Both curves must be monotone (Monotone), as smoothed curves are;
// PathAreaError measures an unsmoothed noisy curve, which can cross
// itself, against a monotone one.
func AreaError(a, b *Curve) (float64, error) {
	fa, err := newPiecewise("first", a)
	if err != nil {
		return 0, err
	}
	fb, err := newPiecewise("second", b)
	if err != nil {
		return 0, err
	}
	xs := slices.Concat(fa.x, fb.x)
	slices.Sort(xs)
	xs = slices.Compact(xs)
	var area float64
	for k := 0; k+1 < len(xs); k++ {
		lo, hi := xs[k], xs[k+1]
		d0 := fa.right(lo) - fb.right(lo)
		d1 := fa.left(hi) - fb.left(hi)
		area += absLinearIntegral(d0, d1, hi-lo)
	}
	return area, nil
}

// PathAreaError returns the area between a monotone curve truth and a
// curve c that need not be monotone (an unsmoothed private curve, which
// may cross itself or leave [0, 1]), measured along c's polyline: the sum
// over its segments of ∫ |TPR_c − TPR_truth| |dFPR| (vertical segments
// add nothing). truth is extended by TPR 0 left of FPR 0 and TPR 1
// right of FPR 1. When c is monotone this is AreaError(truth, c).
func PathAreaError(truth, c *Curve) (float64, error) {
	ft, err := newPiecewise("true", truth)
	if err != nil {
		return 0, err
	}
	if c == nil || len(c.TPR) < 2 || len(c.FPR) != len(c.TPR) {
		return 0, fmt.Errorf("roc: private curve has no points or unequal FPR and TPR lengths")
	}
	var area float64
	for i := 0; i+1 < len(c.FPR); i++ {
		x0, y0, x1, y1 := c.FPR[i], c.TPR[i], c.FPR[i+1], c.TPR[i+1]
		if x0 == x1 {
			continue
		}
		if x0 > x1 {
			x0, y0, x1, y1 = x1, y1, x0, y0
		}
		xs := []float64{x0, x1}
		for _, x := range append(ft.x, 0, 1) {
			if x > x0 && x < x1 {
				xs = append(xs, x)
			}
		}
		slices.Sort(xs)
		xs = slices.Compact(xs)
		for k := 0; k+1 < len(xs); k++ {
			lo, hi := xs[k], xs[k+1]
			d0 := interpolate(x0, y0, x1, y1, lo) - ft.extended(lo, true)
			d1 := interpolate(x0, y0, x1, y1, hi) - ft.extended(hi, false)
			area += absLinearIntegral(d0, d1, hi-lo)
		}
	}
	return area, nil
}

// extended is the curve's right (fromRight) or left limit at x, extended
// by 0 left of x = 0 and by 1 right of x = 1.
func (p *piecewise) extended(x float64, fromRight bool) float64 {
	switch {
	case x < 0 || x == 0 && !fromRight:
		return 0
	case x > 1 || x == 1 && fromRight:
		return 1
	case fromRight:
		return p.right(x)
	}
	return p.left(x)
}

// absLinearIntegral is ∫ |d(x)| over an interval of width w on which d
// is linear from d0 to d1.
func absLinearIntegral(d0, d1, w float64) float64 {
	if d0*d1 >= 0 {
		return w * (math.Abs(d0) + math.Abs(d1)) / 2
	}
	return w * (d0*d0 + d1*d1) / (2 * (math.Abs(d0) + math.Abs(d1)))
}

// piecewise is a monotone ROC curve as points sorted by (FPR, TPR).
type piecewise struct{ x, y []float64 }

func newPiecewise(name string, c *Curve) (*piecewise, error) {
	if c == nil || len(c.TPR) < 2 || len(c.FPR) != len(c.TPR) {
		return nil, fmt.Errorf("roc: %s curve has no points or unequal FPR and TPR lengths", name)
	}
	if !c.Monotone() {
		return nil, fmt.Errorf("roc: %s curve is not monotone in [0, 1] (smooth it first)", name)
	}
	n := len(c.TPR)
	p := &piecewise{x: make([]float64, n), y: make([]float64, n)}
	for i := range n { // threshold order is decreasing in both rates
		p.x[i], p.y[i] = c.FPR[n-1-i], c.TPR[n-1-i]
	}
	if p.x[0] != 0 || p.y[0] != 0 || p.x[n-1] != 1 || p.y[n-1] != 1 {
		return nil, fmt.Errorf("roc: %s curve does not run from (0, 0) to (1, 1)", name)
	}
	return p, nil
}

// right is the limit of the curve at x from the right: the highest TPR
// among points at x, or the interpolation between the points around x.
func (p *piecewise) right(x float64) float64 {
	j := sortLast(p.x, x) // last index with p.x[j] ≤ x
	if p.x[j] == x || j == len(p.x)-1 {
		return p.y[j]
	}
	return interpolate(p.x[j], p.y[j], p.x[j+1], p.y[j+1], x)
}

// left is the limit of the curve at x from the left: the lowest TPR
// among points at x, or the interpolation between the points around x.
func (p *piecewise) left(x float64) float64 {
	j, _ := slices.BinarySearch(p.x, x) // first index with p.x[j] ≥ x
	if j == len(p.x) {
		j--
	}
	if p.x[j] == x || j == 0 {
		return p.y[j]
	}
	return interpolate(p.x[j-1], p.y[j-1], p.x[j], p.y[j], x)
}

// sortLast returns the last index j with xs[j] ≤ x (0 if none).
func sortLast(xs []float64, x float64) int {
	j, found := slices.BinarySearch(xs, x)
	for found && j+1 < len(xs) && xs[j+1] == x {
		j++
	}
	if !found {
		j--
	}
	return max(j, 0)
}

func interpolate(x0, y0, x1, y1, x float64) float64 {
	return y0 + (y1-y0)*(x-x0)/(x1-x0)
}

// AUCError returns |AUC(a) − AUC(b)|.
func AUCError(a, b *Curve) float64 { return math.Abs(a.AUC() - b.AUC()) }
