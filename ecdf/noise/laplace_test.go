package noise

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// symmetricPMF is the probability mass function of a distribution on
// the integers symmetric about 0.
type symmetricPMF func(x int64) float64

func discreteLaplacePMF(scale float64) symmetricPMF {
	r := math.Exp(-1 / scale)
	c := -math.Expm1(-1/scale) / (1 + r)
	return func(x int64) float64 { return c * math.Pow(r, math.Abs(float64(x))) }
}

// histogram counts draws values of sample.
func histogram(draws int, sample func() int64) map[int64]int {
	h := make(map[int64]int)
	for range draws {
		h[sample()]++
	}
	return h
}

// chiSquareZ is Pearson's χ² statistic of the histogram h of draws
// values against pmf, with cells {x} for |x| ≤ K and the two pooled
// tails {x < −K}, {x > K}, K the largest value such that every cell's
// expected count is at least 10. It is turned into a standard normal
// deviate by the Wilson–Hilferty transform
// ((χ²/k)^{1/3} − 1 + 2/(9k)) / √(2/(9k)), k the degrees of freedom:
// under the null hypothesis z is approximately N(0, 1).
func chiSquareZ(h map[int64]int, draws int, pmf symmetricPMF) (z, stat float64, cells int) {
	n := float64(draws)
	var k int64
	inner := pmf(0)
	for n*pmf(k+1) >= 10 && n*(1-inner-2*pmf(k+1))/2 >= 10 {
		k++
		inner += 2 * pmf(k)
	}
	for x := -k; x <= k; x++ {
		e := n * pmf(x)
		d := float64(h[x]) - e
		stat += d * d / e
	}
	var low, high int
	for x, c := range h {
		switch {
		case x < -k:
			low += c
		case x > k:
			high += c
		}
	}
	tail := n * (1 - inner) / 2
	for _, c := range []int{low, high} {
		stat += (float64(c) - tail) * (float64(c) - tail) / tail
	}
	cells = int(2*k + 3)
	df := float64(cells - 1)
	v := 2 / (9 * df)
	z = (math.Cbrt(stat/df) - 1 + v) / math.Sqrt(v)
	return z, stat, cells
}

// moments returns the variance and fourth moment of a symmetric pmf by
// summation up to |x| = limit.
func moments(pmf symmetricPMF, limit int64) (mu2, mu4 float64) {
	for x := int64(1); x <= limit; x++ {
		p, xx := 2*pmf(x), float64(x*x)
		mu2 += xx * p
		mu4 += xx * xx * p
	}
	return mu2, mu4
}

// sampleVarianceZ is (s² − σ²)/se, with s² the sample variance about 0
// of the draws and se = √((μ4 − σ⁴)/n) its standard error.
func sampleVarianceZ(draws []int64, mu2, mu4 float64) float64 {
	var s2 float64
	for _, x := range draws {
		s2 += float64(x) * float64(x)
	}
	n := float64(len(draws))
	return (s2/n - mu2) / math.Sqrt((mu4-mu2*mu2)/n)
}

func TestDiscreteLaplaceChiSquare(t *testing.T) {
	const draws = 200000
	for _, scale := range []float64{0.5, 1, 3.7, 11} {
		d, err := NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		src := rand.NewPCG(uint64(scale*1000), 7)
		h := histogram(draws, func() int64 { return d.Sample(src) })
		z, stat, cells := chiSquareZ(h, draws, discreteLaplacePMF(scale))
		t.Logf("scale %v: χ² = %.1f on %d cells (z = %.2f)", scale, stat, cells, z)
		if math.Abs(z) > 5 {
			t.Errorf("scale %v: χ² = %.1f on %d cells, z = %.2f: not Lap_Z(%v)", scale, stat, cells, z, scale)
		}
		// The same draws must reject a scale off by a factor of 2.
		for _, wrong := range []float64{scale / 2, scale * 2} {
			if z, _, _ := chiSquareZ(h, draws, discreteLaplacePMF(wrong)); z < 5 {
				t.Errorf("scale %v: draws fit Lap_Z(%v) too (z = %.2f): the test has no power", scale, wrong, z)
			}
		}
	}
}

func TestDiscreteLaplaceVariance(t *testing.T) {
	const draws = 100000
	for _, scale := range []float64{0.5, 1, 3.7, 11, 110.00000000000001} {
		d, err := NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		pmf := discreteLaplacePMF(scale)
		mu2, mu4 := moments(pmf, int64(80*scale)+10)
		if rel := math.Abs(d.Variance()-mu2) / mu2; rel > 1e-9 {
			t.Errorf("scale %v: Variance() = %v, pmf sum gives %v", scale, d.Variance(), mu2)
		}
		// The discrete variance is 2t² − 1/6 + O(1/t²), not 2t².
		if scale >= 1 {
			if diff := 2*scale*scale - d.Variance(); math.Abs(diff-1.0/6) > 0.05/(scale*scale) {
				t.Errorf("scale %v: 2t² − Variance() = %v, want ≈ 1/6", scale, diff)
			}
		}
		src := rand.NewPCG(uint64(scale*1000), 11)
		x := make([]int64, draws)
		for i := range x {
			x[i] = d.Sample(src)
		}
		if z := sampleVarianceZ(x, mu2, mu4); math.Abs(z) > 5 {
			t.Errorf("scale %v: sample variance is %.2f standard errors from %v", scale, z, mu2)
		}
		wrong, wrong4 := moments(discreteLaplacePMF(2*scale), int64(160*scale)+10)
		if z := sampleVarianceZ(x, wrong, wrong4); math.Abs(z) < 5 {
			t.Errorf("scale %v: sample variance also fits scale %v (z = %.2f)", scale, 2*scale, z)
		}
	}
}

func TestDiscreteLaplaceIsDeterministicGivenTheSource(t *testing.T) {
	d, err := NewDiscreteLaplace(3.7)
	if err != nil {
		t.Fatal(err)
	}
	var seed Seed
	a, b := seed.Stream(1, 2), seed.Stream(1, 2)
	for i := range 1000 {
		if x, y := d.Sample(a), d.Sample(b); x != y {
			t.Fatalf("draw %d: %d != %d from equal streams", i, x, y)
		}
	}
}

func TestNewDiscreteLaplaceRejectsBadScales(t *testing.T) {
	for _, c := range []struct {
		scale float64
		want  string
	}{
		{0, "scale 0: must be positive"},
		{-2, "scale -2: must be positive"},
		{math.NaN(), "scale NaN"},
		{math.Inf(1), "scale +Inf"},
		{1 << 53, "above the supported maximum"},
		{1e-5, "needs more than 62 bits"},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if _, err := NewDiscreteLaplace(c.scale); !errors.Is(err, ErrScale) || !strings.HasPrefix(err.Error(), "noise: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewDiscreteLaplace(%v) error = %v, want one containing %q", c.scale, err, c.want)
			}
		})
	}
	for _, ok := range []float64{0x1p-40, 0x1p-10, 1.0 / 3, 1e15} {
		if _, err := NewDiscreteLaplace(ok); err != nil {
			t.Errorf("NewDiscreteLaplace(%v): %v", ok, err)
		}
	}
}

// TestRoundUpScale checks that RoundUpScale returns the least multiple
// of 2^−62 representable as a float64 at or above the target, and that
// both samplers accept it.
func TestRoundUpScale(t *testing.T) {
	for _, c := range []struct {
		name   string
		target *big.Rat
		want   float64
	}{
		{"exact float", big.NewRat(5, 2), 2.5},
		{"one third", big.NewRat(1, 3), math.Nextafter(1.0/3, 1)}, // 1/3 rounds down to nearest
		{"one tenth", big.NewRat(1, 10), 0.1},                     // 1/10 rounds up to nearest
		{"1e-5 is finer than 2^-62", new(big.Rat).SetFloat64(1e-5), math.Ldexp(46116860184274, -62)},
		{"2^-40", new(big.Rat).SetFloat64(0x1p-40), 0x1p-40},
		{"below 2^-62", big.NewRat(1, 3<<61), 0x1p-62},
		{"far below float64", new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 2000)), 0x1p-62},
		{"zero", new(big.Rat), 0x1p-62},
		{"2^64 times a third", new(big.Rat).SetFrac(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(3)), math.Nextafter(0x1p64/3, math.Inf(1))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := RoundUpScale(c.target)
			if got != c.want {
				t.Errorf("RoundUpScale(%v) = %v, want %v", c.target, got, c.want)
			}
			if new(big.Rat).SetFloat64(got).Cmp(c.target) < 0 {
				t.Errorf("RoundUpScale(%v) = %v is below the target", c.target, got)
			}
			prev := math.Nextafter(got, 0) // the representable value just below got
			if got <= 0x1p-10 {
				prev = got - 0x1p-62
			}
			if prev > 0 && new(big.Rat).SetFloat64(prev).Cmp(c.target) >= 0 {
				t.Errorf("RoundUpScale(%v) = %v, but %v is representable and not below the target", c.target, got, prev)
			}
			if got < 0x1p52 {
				if _, err := NewDiscreteLaplace(got); err != nil {
					t.Errorf("NewDiscreteLaplace(%v): %v", got, err)
				}
			}
			if _, err := NewDiscreteGaussian(got); err != nil {
				t.Errorf("NewDiscreteGaussian(%v): %v", got, err)
			}
		})
	}
}

func TestUniformBelowIsUniform(t *testing.T) {
	const draws = 60000
	src := rand.NewPCG(3, 4)
	for _, n := range []uint64{1, 3, 7, 1<<62 + 1} {
		var counts [8]int
		cells := min(n, 8) // n ≤ 8: one cell per value; else 8 near-equal cells
		for range draws {
			counts[int(float64(uniformBelow(src, n))/float64(n)*float64(cells))]++
		}
		e := float64(draws) / float64(cells)
		stat := 0.0
		for _, c := range counts[:cells] {
			stat += (float64(c) - e) * (float64(c) - e) / e
		}
		// χ² with at most 7 degrees of freedom: P(χ²_7 > 35) < 2e-5.
		if stat > 35 {
			t.Errorf("uniformBelow(%d): χ² = %.1f over %d cells", n, stat, cells)
		}
	}
}

// countingSource counts the words drawn from a Source.
type countingSource struct {
	Source
	words int
}

func (c *countingSource) Uint64() uint64 { c.words++; return c.Source.Uint64() }

// BenchmarkDiscreteLaplace draws from a ChaCha20 seed stream, as the
// mechanisms do, and reports the 64-bit words consumed per sample, a
// machine-independent measure of the sampler's cost.
func BenchmarkDiscreteLaplace(b *testing.B) {
	for _, scale := range []float64{0.5, 1, 11, 110.00000000000001} {
		d, err := NewDiscreteLaplace(scale)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("scale="+strconv.FormatFloat(scale, 'g', 4, 64), func(b *testing.B) {
			var seed Seed
			src := &countingSource{Source: seed.Stream(0, 0)}
			for b.Loop() {
				d.Sample(src)
			}
			b.ReportMetric(float64(src.words)/float64(b.N), "words/op")
		})
	}
}

// TestExactFractionErrorIsShort: the refusal of a scale finer than
// 2^−62 names the value and the limit, not its exact fraction's
// hundreds of digits.
func TestExactFractionErrorIsShort(t *testing.T) {
	_, err := NewDiscreteLaplace(1e-300)
	if !errors.Is(err, ErrScale) || len(err.Error()) > 200 || !strings.Contains(err.Error(), "1e-300") || !strings.Contains(err.Error(), "62 bits") {
		t.Fatalf("NewDiscreteLaplace(1e-300): %v; want a short error naming 1e-300 and 62 bits", err)
	}
}
