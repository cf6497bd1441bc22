package hierarchy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMRMSEBruteForce checks MRMSE and SmoothedRelativeError against
// their definitions evaluated term by term on small exact laws (the
// support listed with multiplicity), and Lemma B.1 on random estimators.
func TestMRMSEBruteForce(t *testing.T) {
	for _, c := range []struct {
		alpha, truth float64
		est          []float64
		mrmse        float64
	}{
		{0, 10, []float64{8, 12}, 2},
		{0.1, 10, []float64{8, 12}, 1},                   // |±2| − 1 = 1
		{0.5, 10, []float64{8, 12}, 0},                   // slack 5 covers the error
		{0.1, 100, []float64{100, 130}, 20 / math.Sqrt2}, // (0, 30 − 10)
		{0.25, 4, []float64{0, 4, 4, 4}, 1.5},            // (4 − 1)² / 4
		{0, 0, []float64{-3, 3, 0}, math.Sqrt(6)},
	} {
		if got := MRMSE(c.alpha, c.truth, c.est); math.Abs(got-c.mrmse) > 1e-12 {
			t.Errorf("MRMSE(%v, %v, %v) = %v, want %v", c.alpha, c.truth, c.est, got, c.mrmse)
		}
	}
	if MRMSE(0.1, 3, nil) != 0 || SmoothedRelativeError(1, 3, nil) != 0 {
		t.Error("no estimates: nonzero error")
	}
	if got := SmoothedRelativeError(5, 2, []float64{0, 6}); got != 0.6 { // (2+4)/2/5
		t.Errorf("SmoothedRelativeError = %v, want 0.6", got)
	}
	if got := SmoothedRelativeError(5, 20, []float64{18, 22}); got != 0.1 {
		t.Errorf("SmoothedRelativeError = %v, want 0.1", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		truth := math.Floor(rng.ExpFloat64() * 50)
		est := make([]float64, 1+rng.IntN(20))
		for k := range est {
			est[k] = truth + rng.NormFloat64()*rng.ExpFloat64()*20
		}
		alpha, tau := rng.Float64(), 0.5+rng.ExpFloat64()*10
		if sre, b := SmoothedRelativeError(tau, truth, est), SmoothedBound(alpha, tau, MRMSE(alpha, truth, est)); sre > b*(1+1e-12) {
			t.Fatalf("Lemma B.1 fails: y=%v α=%v τ=%v: %v > %v", truth, alpha, tau, sre, b)
		}
		if MRMSE(alpha, truth, est) > MRMSE(0, truth, est) {
			t.Fatalf("α-mRMSE above the RMSE at y=%v α=%v", truth, alpha)
		}
	}
}

// TestMultiplicativeError checks the integrand of Definition 1.4.
func TestMultiplicativeError(t *testing.T) {
	for _, c := range []struct{ alpha, truth, est, want float64 }{
		{0, 5, 7, 2}, {0, 5, 3, 2}, {0.2, 5, 7, 1}, {0.2, 5, 3, 1}, {0.5, 5, 7, 0}, {1, 0, 4, 4},
	} {
		if got := MultiplicativeError(c.alpha, c.truth, c.est); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("MultiplicativeError(%v, %v, %v) = %v, want %v", c.alpha, c.truth, c.est, got, c.want)
		}
	}
}
