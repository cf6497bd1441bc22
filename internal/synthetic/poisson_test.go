package synthetic

import (
	"math"
	"slices"
	"testing"
)

// TestPoissonHistogramMoments checks the mean and variance of the counts
// against λ within 5 standard errors: SE(mean) = √(λ/N) and
// SE(variance) ≈ √((μ4 − σ⁴)/N) = √((λ + 2λ²)/N) for Poisson counts.
// Both branches of the sampler (λ < 10 and λ ≥ 10) are covered.
func TestPoissonHistogramMoments(t *testing.T) {
	const n = 1 << 14
	for _, lambda := range []float64{3, 100} {
		h, err := PoissonHistogram(lambda, n, 42)
		if err != nil {
			t.Fatal(err)
		}
		var sum, sumSq float64
		for _, c := range h {
			if c < 0 {
				t.Fatalf("negative count %d", c)
			}
			sum += float64(c)
			sumSq += float64(c) * float64(c)
		}
		mean := sum / n
		variance := sumSq/n - mean*mean
		if se := math.Sqrt(lambda / n); math.Abs(mean-lambda) > 5*se {
			t.Errorf("λ = %v: mean count %v, want λ ± 5·%v", lambda, mean, se)
		}
		if se := math.Sqrt((lambda + 2*lambda*lambda) / n); math.Abs(variance-lambda) > 5*se {
			t.Errorf("λ = %v: count variance %v, want λ ± 5·%v", lambda, variance, se)
		}
	}
}

func TestPoissonHistogramSeeded(t *testing.T) {
	a, _ := PoissonHistogram(10, 1000, 7)
	b, _ := PoissonHistogram(10, 1000, 7)
	c, _ := PoissonHistogram(10, 1000, 8)
	if !slices.Equal(a, b) {
		t.Error("equal seeds gave different data sets")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave equal data sets")
	}
	for _, lambda := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := PoissonHistogram(lambda, 10, 1); err == nil {
			t.Errorf("PoissonHistogram accepted λ = %v", lambda)
		}
	}
	if _, err := PoissonHistogram(1, 0, 1); err == nil {
		t.Error("PoissonHistogram accepted n = 0")
	}
}
