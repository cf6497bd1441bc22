package noise

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func discreteGaussianPMF(sigma2 float64) symmetricPMF {
	limit := int64(40*math.Sqrt(sigma2)) + 2
	mass := 1.0
	for x := int64(1); x <= limit; x++ {
		mass += 2 * math.Exp(-float64(x*x)/(2*sigma2))
	}
	return func(x int64) float64 { return math.Exp(-float64(x*x)/(2*sigma2)) / mass }
}

func TestDiscreteGaussianChiSquare(t *testing.T) {
	const draws = 100000
	for _, sigma2 := range []float64{0.25, 1, 3.7, 50, 0x1p-3 * 1001} {
		g, err := NewDiscreteGaussian(sigma2)
		if err != nil {
			t.Fatal(err)
		}
		src := rand.NewPCG(uint64(sigma2*1000), 5)
		h := histogram(draws, func() int64 { return g.Sample(src) })
		z, stat, cells := chiSquareZ(h, draws, discreteGaussianPMF(sigma2))
		t.Logf("σ² = %v: χ² = %.1f on %d cells (z = %.2f)", sigma2, stat, cells, z)
		if math.Abs(z) > 5 {
			t.Errorf("σ² = %v: χ² = %.1f on %d cells, z = %.2f: not N_Z(0, %v)", sigma2, stat, cells, z, sigma2)
		}
		// The same draws must reject σ off by a factor of 2 (σ² by 4)
		// and σ² off by a factor of 2.
		for _, wrong := range []float64{sigma2 / 4, sigma2 / 2, sigma2 * 2} {
			if z, _, _ := chiSquareZ(h, draws, discreteGaussianPMF(wrong)); z < 5 {
				t.Errorf("σ² = %v: draws fit N_Z(0, %v) too (z = %.2f): the test has no power", sigma2, wrong, z)
			}
		}
	}
}

func TestDiscreteGaussianVariance(t *testing.T) {
	const draws = 100000
	for _, sigma2 := range []float64{0.25, 1, 3.7, 50, 1e4} {
		g, err := NewDiscreteGaussian(sigma2)
		if err != nil {
			t.Fatal(err)
		}
		mu2, mu4 := moments(discreteGaussianPMF(sigma2), int64(40*math.Sqrt(sigma2))+2)
		if rel := math.Abs(g.Variance()-mu2) / mu2; rel > 1e-9 {
			t.Errorf("σ² = %v: Variance() = %v, pmf sum gives %v", sigma2, g.Variance(), mu2)
		}
		if sigma2 >= 1 && math.Abs(g.Variance()-sigma2) > 1e-6*sigma2 {
			t.Errorf("σ² = %v: Variance() = %v, want σ² to 1e-6 for σ ≥ 1", sigma2, g.Variance())
		}
		src := rand.NewPCG(uint64(sigma2*1000), 13)
		x := make([]int64, draws)
		for i := range x {
			x[i] = g.Sample(src)
		}
		if z := sampleVarianceZ(x, mu2, mu4); math.Abs(z) > 5 {
			t.Errorf("σ² = %v: sample variance is %.2f standard errors from %v", sigma2, z, mu2)
		}
	}
}

// TestDiscreteGaussianFixedPointVariance draws N_Z(0, s²·2^64), the
// noise of a fixed-point component with 2^32 units per count, whose σ²
// has a numerator far above 2^62, and checks the sample variance against
// σ² within 5 standard errors σ²·√(2/n) (Gaussian fourth moment 3σ⁴;
// the discrete one differs by a relative e^{−2π²σ²}): at n = 20000 the
// band is ±5 %, so a factor of 2 in σ² or in the multiplier is caught.
func TestDiscreteGaussianFixedPointVariance(t *testing.T) {
	const draws = 20000
	for _, s2 := range []float64{3.7, 1234.5} {
		sigma2 := s2 * 0x1p64 // exact: a power-of-two multiple
		g, err := NewDiscreteGaussian(sigma2)
		if err != nil {
			t.Fatal(err)
		}
		if g.Variance() != sigma2 {
			t.Errorf("σ² = %v: Variance() = %v, want σ²", sigma2, g.Variance())
		}
		src := rand.NewPCG(uint64(s2*10), 17)
		var sum float64
		for range draws {
			x := float64(g.Sample(src))
			sum += x * x
		}
		se := sigma2 * math.Sqrt(2.0/draws)
		if z := (sum/draws - sigma2) / se; math.Abs(z) > 5 {
			t.Errorf("σ² = %v·2^64: sample variance %.4g is %.1f standard errors from σ²", s2, sum/draws, z)
		}
		if 2*sigma2-sigma2 < 10*se {
			t.Errorf("σ² = %v·2^64: the test cannot tell σ² from 2σ²", s2)
		}
	}
}

func TestDiscreteGaussianTinyVariance(t *testing.T) {
	// σ² = 2^−40: P(X ≠ 0) ≈ 2e^{−2^39}, so every draw is 0.
	g, err := NewDiscreteGaussian(0x1p-40)
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewPCG(1, 1)
	for range 1000 {
		if x := g.Sample(src); x != 0 {
			t.Fatalf("N_Z(0, 2^-40) gave %d", x)
		}
	}
}

func TestNewDiscreteGaussianRejectsBadVariances(t *testing.T) {
	for _, c := range []struct {
		sigma2 float64
		want   string
	}{
		{0, "σ² 0: must be positive"},
		{-1, "σ² -1: must be positive"},
		{math.NaN(), "σ² NaN"},
		{math.Inf(1), "σ² +Inf"},
		{1e-5, "needs more than 62 bits"},
		{1e32, "σ must be below 2^52"},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if _, err := NewDiscreteGaussian(c.sigma2); !errors.Is(err, ErrScale) || !strings.HasPrefix(err.Error(), "noise: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewDiscreteGaussian(%v) error = %v, want one containing %q", c.sigma2, err, c.want)
			}
		})
	}
}

// BenchmarkDiscreteGaussian reports the source words per sample beside
// the time, as BenchmarkDiscreteLaplace does.
func BenchmarkDiscreteGaussian(b *testing.B) {
	for _, sigma2 := range []float64{1, 100, 1e6} {
		g, err := NewDiscreteGaussian(sigma2)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("sigma2="+strconv.FormatFloat(sigma2, 'g', 4, 64), func(b *testing.B) {
			var seed Seed
			src := &countingSource{Source: seed.Stream(0, 0)}
			for b.Loop() {
				g.Sample(src)
			}
			b.ReportMetric(float64(src.words)/float64(b.N), "words/op")
		})
	}
}
