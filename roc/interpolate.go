package roc

import (
	"fmt"
	"math"
)

// Interpolate returns the curve c with k − 1 points inserted between
// the points of every two consecutive thresholds (k ≥ 1; k = 1 returns
// a copy), an estimate of the unbinned curve between the grid's
// thresholds. Each rate is interpolated on its own as a function of the
// threshold index t by the monotone piecewise-cubic Hermite interpolant
// (PCHIP): at an inner point the slope is the harmonic mean
// 2/(1/Δ₋ + 1/Δ₊) of the adjacent differences when they have the same
// sign and 0 otherwise (Fritsch–Butland), at an end the three-point
// slope of endSlope. Every slope is then at most 2 (inner) or 1.5 (end)
// times each adjacent difference and of its sign, which keeps each cubic
// piece monotone (Fritsch–Carlson: slope/Δ in [0, 3]) and between its
// two end values, so a monotone curve stays monotone in [0, 1] and keeps
// its points, and flat stretches (a bin holding none of a class) stay
// flat. The linear interpolation that Curve implies assumes the ratio of
// the two classes constant within a bin; this one lets both rates bend
// as their neighbouring bins do. Post-processing: no privacy cost.
func (c *Curve) Interpolate(k int) (*Curve, error) {
	if k < 1 {
		return nil, fmt.Errorf("roc: interpolation factor %d is below 1", k)
	}
	return &Curve{Positives: c.Positives, Negatives: c.Negatives, FPR: pchip(c.FPR, k), TPR: pchip(c.TPR, k)}, nil
}

// pchip evaluates the Fritsch–Butland interpolant of y (at t = 0, 1, …)
// at t = j/k, j = 0..k(len(y)−1).
func pchip(y []float64, k int) []float64 {
	n := len(y)
	if n < 2 {
		return append([]float64(nil), y...)
	}
	d := make([]float64, n)
	d[0], d[n-1] = y[1]-y[0], y[n-1]-y[n-2]
	if n > 2 {
		d[0], d[n-1] = endSlope(y[1]-y[0], y[2]-y[1]), endSlope(y[n-1]-y[n-2], y[n-2]-y[n-3])
	}
	for i := 1; i+1 < n; i++ {
		a, b := y[i]-y[i-1], y[i+1]-y[i]
		if a*b > 0 {
			d[i] = 2 / (1/a + 1/b)
		}
	}
	out := make([]float64, 0, k*(n-1)+1)
	for i := 0; i+1 < n; i++ {
		out = append(out, y[i])
		lo, hi := min(y[i], y[i+1]), max(y[i], y[i+1])
		for j := 1; j < k; j++ {
			s := float64(j) / float64(k)
			h00, h10 := (1+2*s)*(1-s)*(1-s), s*(1-s)*(1-s)
			h01, h11 := s*s*(3-2*s), s*s*(s-1)
			v := min(max(h00*y[i]+h10*d[i]+h01*y[i+1]+h11*d[i+1], lo), hi)
			if prev := out[len(out)-1]; y[i+1] < y[i] { // undo rounding's wiggles
				v = min(v, prev)
			} else {
				v = max(v, prev)
			}
			out = append(out, v)
		}
	}
	return append(out, y[n-1])
}

// endSlope is PCHIP's three-point slope at an end whose adjacent
// difference is a and next difference b: (3a − b)/2 (Moler, Numerical
// Computing with MATLAB, §3.4), set to 0 when its sign is not a's. For a
// monotone sequence a and b have one sign, so it is at most 1.5a.
func endSlope(a, b float64) float64 {
	d := (3*a - b) / 2
	if d*a <= 0 {
		return 0
	}
	if a*b < 0 && math.Abs(d) > 3*math.Abs(a) {
		return 3 * a
	}
	return d
}
