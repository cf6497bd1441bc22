package roc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// binormal is the population ROC curve of scores N(shift·y, 1) at n
// thresholds evenly spaced over [lo, hi] (TPR = 1 − Φ(τ − shift),
// FPR = 1 − Φ(τ)), with the exact ends (1, 1) and (0, 0).
func binormal(n int, lo, hi, shift float64) *Curve {
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	c := &Curve{Positives: 1, Negatives: 1, FPR: make([]float64, n+1), TPR: make([]float64, n+1)}
	c.FPR[0], c.TPR[0] = 1, 1
	for i := 1; i < n; i++ {
		tau := lo + (hi-lo)*float64(i)/float64(n)
		c.FPR[i], c.TPR[i] = 1-phi(tau), 1-phi(tau-shift)
	}
	return c // FPR[n] = TPR[n] = 0
}

// TestInterpolate: the interpolated curve keeps the curve's points at
// every k-th index, stays monotone in [0, 1] (also with flat stretches,
// a bin without one class), reproduces rates linear in the threshold
// exactly, and k < 1 is refused.
func TestInterpolate(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	for _, k := range []int{1, 2, 8} {
		t.Run("monotone", func(t *testing.T) {
			for range 50 {
				n := 2 + rng.IntN(40)
				pos, neg := make([]float64, n), make([]float64, n)
				for i := range n {
					if rng.IntN(3) > 0 { // a third of the bins hold no positives
						pos[i] = float64(rng.IntN(20))
					}
					neg[i] = float64(rng.IntN(20) * rng.IntN(2))
					if i > 0 {
						pos[i] += pos[i-1]
						neg[i] += neg[i-1]
					}
				}
				pos[n-1]++
				neg[n-1]++
				c, err := FromPrefixes(pos, neg, nil)
				if err != nil {
					t.Fatal(err)
				}
				ic, err := c.Interpolate(k)
				if err != nil {
					t.Fatal(err)
				}
				if len(ic.FPR) != k*n+1 || !ic.Monotone() {
					t.Fatalf("k = %d: %d points (want %d), monotone %v", k, len(ic.FPR), k*n+1, ic.Monotone())
				}
				for i := range c.FPR {
					if ic.FPR[k*i] != c.FPR[i] || ic.TPR[k*i] != c.TPR[i] {
						t.Fatalf("k = %d: point %d moved", k, i)
					}
				}
			}
		})
	}
	t.Run("linear", func(t *testing.T) {
		c := &Curve{FPR: []float64{1, 0.75, 0.5, 0.25, 0}, TPR: []float64{1, 0.8, 0.6, 0.4, 0.2}}
		ic, err := c.Interpolate(4)
		if err != nil {
			t.Fatal(err)
		}
		for j := range ic.FPR {
			if f, p := 1-float64(j)/16, 1-0.8*float64(j)/16; math.Abs(ic.FPR[j]-f) > 1e-15 || math.Abs(ic.TPR[j]-p) > 1e-15 {
				t.Errorf("point %d: (%g, %g), want (%g, %g)", j, ic.FPR[j], ic.TPR[j], f, p)
			}
		}
	})
	t.Run("k 0", func(t *testing.T) {
		if _, err := (&Curve{FPR: []float64{1, 0}, TPR: []float64{1, 0}}).Interpolate(0); err == nil {
			t.Error("k = 0 accepted")
		}
	})
}

// TestInterpolateLowersDiscretisation: on the binormal population curve
// (shift 1.8, 16 thresholds over [−4, 6]) the interpolated coarse curve
// lies much closer to the fine curve (2048 thresholds) than the coarse
// polyline does: PCHIP's error is O(h⁴) against the chords' O(h²) for a
// smooth curve, so a factor 4 at h = 10/16 is conservative.
func TestInterpolateLowersDiscretisation(t *testing.T) {
	fine, coarse := binormal(2048, -4, 6, 1.8), binormal(16, -4, 6, 1.8)
	ic, err := coarse.Interpolate(16)
	if err != nil {
		t.Fatal(err)
	}
	chords, err := AreaError(fine, coarse)
	if err != nil {
		t.Fatal(err)
	}
	cubic, err := AreaError(fine, ic)
	if err != nil {
		t.Fatal(err)
	}
	if !(cubic < chords/4) {
		t.Errorf("area to the fine curve: interpolated %g, polyline %g (want < 1/4)", cubic, chords)
	}
	t.Logf("area to the fine curve: interpolated %g, polyline %g", cubic, chords)
}
