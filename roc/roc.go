package roc

import (
	"fmt"
	"math"
)

// Smoother post-processes a noisy ECDF f (f[i−1] at bin i, normalised to
// end at 1) into a non-decreasing curve in [0, 1]: the smoothing of
// dp-ecdf §3.2 (Eq. 3, p = 1 or 2), e.g. ecdf/smooth. Smoothing a
// released curve is post-processing and costs no privacy budget.
type Smoother func(f []float64) ([]float64, error)

// Curve is an ROC curve at the thresholds of a grid τ_1 < … < τ_N, with
// the convention that a higher score means more likely positive:
// threshold τ_i classifies as positive the instances with score > τ_i.
// Index i = 0 is the threshold below the grid (everything positive,
// FPR = TPR = 1); index N is τ_N, the top of the domain (nothing
// positive, FPR = TPR = 0).
type Curve struct {
	// Positives and Negatives are the totals the rates are normalised
	// by: the released (noisy) prefix sums at τ_N of the two vectors.
	Positives, Negatives float64
	// FPR[i] and TPR[i], i = 0..N, are the rates at threshold τ_i.
	FPR, TPR []float64
}

// FromPrefixes builds the ROC curve from the prefix sums of positives
// and negatives by score bin: pos[i−1] = #positives with bin ≤ i (and
// likewise neg), exact or released with noise. Each vector is normalised
// by its own last entry (the released total), smoothed into a
// non-decreasing ECDF in [0, 1] when smooth is not nil, and turned into
// rates: TPR(τ_i) = 1 − F_pos(τ_i), FPR(τ_i) = 1 − F_neg(τ_i). The ends
// (1, 1) at i = 0 and (0, 0) at i = N are data-independent facts (every
// instance lies in the grid) and are set exactly.
//
// Without smoothing the curve carries the raw noise and need not be
// monotone; AUC is still defined, AreaError is not.
func FromPrefixes(pos, neg []float64, smooth Smoother) (*Curve, error) {
	if len(pos) == 0 || len(pos) != len(neg) {
		return nil, fmt.Errorf("roc: positive and negative prefix vectors have lengths %d and %d (want equal, at least 1)", len(pos), len(neg))
	}
	fpos, err := rates("positive", pos, smooth)
	if err != nil {
		return nil, err
	}
	fneg, err := rates("negative", neg, smooth)
	if err != nil {
		return nil, err
	}
	return &Curve{Positives: pos[len(pos)-1], Negatives: neg[len(neg)-1], FPR: fneg, TPR: fpos}, nil
}

// rates returns 1 − F(τ_i), i = 0..N, for the prefix vector prefix of
// the named class, F its (smoothed) ECDF.
func rates(class string, prefix []float64, smooth Smoother) ([]float64, error) {
	total := prefix[len(prefix)-1]
	if !(total > 0) || math.IsInf(total, 0) {
		return nil, fmt.Errorf("roc: released number of %s instances is %v: the rate is undefined (too few of them for this ε)", class, total)
	}
	f := make([]float64, len(prefix))
	for i, v := range prefix {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("roc: %s prefix sum at bin %d is %v", class, i+1, v)
		}
		f[i] = v / total
	}
	if smooth != nil {
		s, err := smooth(f)
		if err != nil {
			return nil, fmt.Errorf("roc: smoothing the %s ECDF: %w", class, err)
		}
		if err := checkECDF(s, len(f)); err != nil {
			return nil, fmt.Errorf("roc: smoothed %s ECDF: %w", class, err)
		}
		f = s
	}
	r := make([]float64, len(f)+1)
	r[0] = 1
	for i := 1; i < len(f); i++ {
		r[i] = 1 - f[i-1]
	}
	return r, nil // r[N] = 0
}

// checkECDF reports whether f has n entries, is non-decreasing and lies
// in [0, 1].
func checkECDF(f []float64, n int) error {
	if len(f) != n {
		return fmt.Errorf("%d values for %d bins", len(f), n)
	}
	for i, v := range f {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("value %v at bin %d is not in [0, 1]", v, i+1)
		}
		if i > 0 && v < f[i-1] {
			return fmt.Errorf("decreases at bin %d (%v after %v)", i+1, v, f[i-1])
		}
	}
	return nil
}

// Thresholds returns N, the number of grid thresholds of the curve.
func (c *Curve) Thresholds() int { return len(c.TPR) - 1 }

// AUC returns the area under the curve by the trapezoid rule over its
// points in threshold order, Σ_i (FPR_i − FPR_{i+1})(TPR_i + TPR_{i+1})/2.
// On the exact curve of scores that lie on grid thresholds it equals the
// Mann–Whitney AUC P(s⁺ > s⁻) + ½P(s⁺ = s⁻).
func (c *Curve) AUC() float64 {
	var a float64
	for i := 0; i+1 < len(c.TPR); i++ {
		a += (c.FPR[i] - c.FPR[i+1]) * (c.TPR[i] + c.TPR[i+1]) / 2
	}
	return a
}

// Monotone reports whether both rates are non-increasing in the
// threshold and lie in [0, 1], as a true ROC curve does; smoothed curves
// always are.
func (c *Curve) Monotone() bool {
	for i := range c.TPR {
		if !(c.TPR[i] >= 0 && c.TPR[i] <= 1 && c.FPR[i] >= 0 && c.FPR[i] <= 1) {
			return false
		}
		if i > 0 && (c.TPR[i] > c.TPR[i-1] || c.FPR[i] > c.FPR[i-1]) {
			return false
		}
	}
	return true
}

// ExactPrefixes returns the exact prefix sums of positives and negatives
// over a grid of nBins bins, from each instance's 1-based bin and 0/1
// label: the noise-free input of FromPrefixes (the true ROC curve).
func ExactPrefixes(bins, labels []int, nBins int) (pos, neg []float64, err error) {
	if len(bins) != len(labels) {
		return nil, nil, fmt.Errorf("roc: %d bins but %d labels", len(bins), len(labels))
	}
	if nBins < 1 {
		return nil, nil, fmt.Errorf("roc: number of bins %d is not positive", nBins)
	}
	pos, neg = make([]float64, nBins), make([]float64, nBins)
	for j, b := range bins {
		if b < 1 || b > nBins {
			return nil, nil, fmt.Errorf("roc: instance #%d: bin %d is not in [1, %d]", j, b, nBins)
		}
		switch labels[j] {
		case 1:
			pos[b-1]++
		case 0:
			neg[b-1]++
		default:
			return nil, nil, fmt.Errorf("roc: instance #%d: label %d is not 0 or 1", j, labels[j])
		}
	}
	for i := 1; i < nBins; i++ {
		pos[i] += pos[i-1]
		neg[i] += neg[i-1]
	}
	return pos, neg, nil
}

// TPRAt returns the highest TPR of the curve's polyline (its points in
// threshold order joined by straight segments) at false positive rate
// x: on a monotone curve the curve's value at x, taking the top of a
// vertical step; on a curve that crosses itself the upper envelope of
// its crossings. It is NaN when x is outside the FPR range of the curve.
func (c *Curve) TPRAt(x float64) float64 {
	best := math.NaN()
	for i := 0; i+1 < len(c.FPR); i++ {
		x0, y0, x1, y1 := c.FPR[i], c.TPR[i], c.FPR[i+1], c.TPR[i+1]
		if x < min(x0, x1) || x > max(x0, x1) {
			continue
		}
		y := max(y0, y1)
		if x0 != x1 {
			y = interpolate(x0, y0, x1, y1, x)
		}
		if math.IsNaN(best) || y > best {
			best = y
		}
	}
	return best
}
