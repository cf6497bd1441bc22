package noise

import (
	"fmt"
	"math"
	"testing"
)

// samplersForWords returns discrete Laplace and Gaussian samplers over
// the range of scales the product can use: Laplace scales from 2^−62
// (the finest RoundUpScale gives) to 2^52, σ² from 2^−62 to 2^100 (past a
// fixed-point component's variance s²·2^64), log-spaced, and the scales
// around 1 where the bound is weakest.
func samplersForWords(t *testing.T) map[string]FixedWorkSampler {
	t.Helper()
	out := make(map[string]FixedWorkSampler)
	for e := -62; e <= 52; e += 2 {
		for _, x := range []float64{1, 1.5} {
			if x != 1 && (e < -60 || e >= 52) {
				continue // not a multiple of 2^−62, or above 2^52
			}
			d, err := NewDiscreteLaplace(math.Ldexp(x, e))
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("laplace %g·2^%d", x, e)] = d
		}
	}
	for e := -62; e <= 100; e += 4 {
		for _, x := range []float64{1, 1.5} {
			if x != 1 && e < -60 {
				continue
			}
			g, err := NewDiscreteGaussian(math.Ldexp(x, e))
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("gaussian σ²=%g·2^%d", x, e)] = g
		}
	}
	return out
}

// tailBound is WordTailBound of s.
func tailBound(s FixedWorkSampler, words int) float64 {
	switch d := s.(type) {
	case *DiscreteLaplace:
		return d.WordTailBound(words)
	case *DiscreteGaussian:
		return d.WordTailBound(words)
	}
	panic("unknown sampler")
}

// TestWordBudgetBoundsTheTail: at every scale the derived bound on the
// probability that a draw reads past its budget is at most 2^−40, the
// budget is whole ChaCha20 blocks, and it stays below 8192 words (the
// release's cost; EXPERIMENTS.md). The bound is a function of the public
// scale only.
func TestWordBudgetBoundsTheTail(t *testing.T) {
	worst := map[bool]int{}
	for name, s := range samplersForWords(t) {
		b := s.WordBudget()
		p := tailBound(s, b)
		if p > wordTarget || b%8 != 0 || b > 8192 {
			t.Errorf("%s: budget %d words, bound %.3g (log2 %.1f), want ≤ 2^−40, whole blocks, ≤ 8192", name, b, p, math.Log2(p))
		}
		_, gauss := s.(*DiscreteGaussian)
		worst[gauss] = max(worst[gauss], b)
	}
	t.Logf("largest budgets: Laplace %d words, Gaussian %d words", worst[false], worst[true])
}

// TestWordTailBoundHolds: the derived bound is a bound. For samplers at
// the scales where it is weakest and strongest, at the least budget b
// where it is at least a level (0.25, then 0.01), the fraction of n
// draws reading more than b words is at most the bound plus five
// standard errors of a binomial frequency, √(bound(1 − bound)/n). A bound
// twice too small at 0.01 would be exceeded by ≈ 0.01·n − 5√(0.01·n) =
// 100 draws of 10⁴ (TestWordPGFBoundHolds checks the PGF the bound comes
// from, closer to the truth).
func TestWordTailBoundHolds(t *testing.T) {
	const n = 10000
	lap := func(x float64) FixedWorkSampler { d, _ := NewDiscreteLaplace(x); return d }
	gauss := func(x float64) FixedWorkSampler { g, _ := NewDiscreteGaussian(x); return g }
	for _, tc := range []struct {
		name string
		s    FixedWorkSampler
	}{
		{"laplace 2^-62", lap(0x1p-62)}, {"laplace 1", lap(1)}, {"laplace 1.5", lap(1.5)}, {"laplace 100", lap(100)},
		{"gaussian 2^-62", gauss(0x1p-62)}, {"gaussian 0.25", gauss(0.25)}, {"gaussian 1", gauss(1)},
		{"gaussian 10^4", gauss(1e4)}, {"gaussian 2^40", gauss(0x1p40)}, {"gaussian 2^98", gauss(0x1p98)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seed Seed
			seed[0] = 31
			words := make([]int, n)
			for i := range n {
				src := &wordCount{src: seed.Stream(7, uint64(i))}
				tc.s.Sample(src)
				words[i] = src.n
			}
			for _, level := range []float64{0.25, 0.01} {
				lo, hi := 1, tc.s.WordBudget() // the bound is ≥ level at lo, < level at hi
				for hi-lo > 1 {
					if mid := (lo + hi) / 2; tailBound(tc.s, mid) >= level {
						lo = mid
					} else {
						hi = mid
					}
				}
				b := lo
				bound := tailBound(tc.s, b)
				over := 0
				for _, w := range words {
					if w > b {
						over++
					}
				}
				limit := bound + 5*math.Sqrt(bound*(1-bound)/n)
				if f := float64(over) / n; f > limit {
					t.Errorf("%d of %d draws read more than %d words (%.4f), above the bound %.4f + 5 s.e. = %.4f", over, n, b, f, bound, limit)
				} else {
					t.Logf("%d words: bound %.4f, observed %.5f", b, bound, f)
				}
			}
		})
	}
}

// wordCount counts the words read from src.
type wordCount struct {
	src Source
	n   int
}

func (c *wordCount) Uint64() uint64 { c.n++; return c.src.Uint64() }

// TestSampleFixedKeepsTheStream: draws with fixed work from one stream
// (as counting-on-trees draws all its noise) give the values of plain
// draws, leave the stream where plain draws leave it, and each computes
// WordBudget()/8 + 1 blocks whatever its value.
func TestSampleFixedKeepsTheStream(t *testing.T) {
	lap, _ := NewDiscreteLaplace(2.5)
	fine, _ := NewDiscreteLaplace(0x1p-30)
	gauss, _ := NewDiscreteGaussian(9)
	samplers := []FixedWorkSampler{lap, gauss, fine}
	var seed Seed
	seed[1] = 5
	plain, fixed := seed.Stream(2, 3), seed.Stream(2, 3)
	for i := range 3000 {
		s := samplers[i%len(samplers)]
		if i%7 == 0 {
			plain.Uint64() // an odd position in the block
			fixed.Uint64()
		}
		want := s.Sample(plain)
		before := fixed.Blocks()
		if got := SampleFixed(s, fixed); got != want {
			t.Fatalf("draw %d: %d with fixed work, %d plain", i, got, want)
		}
		if blocks := fixed.Blocks() - before; blocks != uint64(s.WordBudget()/8+1) {
			t.Fatalf("draw %d (value %d): %d blocks computed, want %d", i, want, blocks, s.WordBudget()/8+1)
		}
	}
	for i := range 20 {
		if a, b := plain.Uint64(), fixed.Uint64(); a != b {
			t.Fatalf("word %d after the draws: %#x with fixed work, %#x plain", i, b, a)
		}
	}
}

// TestWordPGFBoundHolds: the PGF bound the tail bounds come from is a
// bound. For each sampler, n draws' word counts W give the mean of z^W
// at z on the Chernoff grid; it must be at most the bound E[z^W] ≤
// drawPGF(z) plus five standard errors, the variance of z^W bounded by
// drawPGF(z²) − 1 (so z only where that is finite). The PGF bound is
// close to the truth — the discrete Laplace's at scales 1 and 2^−62
// equals it within sampling error, the discrete Gaussian's log E[z^W] is
// 1.4 to 2 times the observed — so a proof step that overstated what it
// removes by more than that slack would show, where a tail bound of 0.01
// over an observed 0.0005 would not.
func TestWordPGFBoundHolds(t *testing.T) {
	const n = 20000
	type pgf interface{ drawPGF(float64) float64 }
	lap := func(x float64) pgf { d, _ := NewDiscreteLaplace(x); return newLaplaceWords(d.num, d.den) }
	for _, tc := range []struct {
		name  string
		scale float64
		gauss bool
	}{
		{"laplace 2^-62", 0x1p-62, false}, {"laplace 1", 1, false}, {"laplace 1.5", 1.5, false}, {"laplace 100", 100, false},
		{"gaussian 2^-62", 0x1p-62, true}, {"gaussian 0.25", 0.25, true}, {"gaussian 1", 1, true}, {"gaussian 2.25", 2.25, true},
		{"gaussian 10^4", 1e4, true}, {"gaussian 2^40", 0x1p40, true}, {"gaussian 2^98", 0x1p98, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s FixedWorkSampler
			var bound pgf
			if tc.gauss {
				g, _ := NewDiscreteGaussian(tc.scale)
				s, bound = g, newGaussianWords(g)
			} else {
				d, _ := NewDiscreteLaplace(tc.scale)
				s, bound = d, lap(tc.scale)
			}
			var seed Seed
			seed[0] = 32
			words := make([]float64, n)
			for i := range n {
				src := &wordCount{src: seed.Stream(8, uint64(i))}
				s.Sample(src)
				words[i] = float64(src.n)
			}
			checked := 0
			zGrid(func(z float64) {
				b, b2 := bound.drawPGF(z), bound.drawPGF(z*z)
				if math.IsInf(b2, 1) || b2 > 100 {
					return
				}
				mean := 0.0
				for _, w := range words {
					mean += math.Pow(z, w) / n
				}
				if limit := b + 5*math.Sqrt((b2-1)/n); mean > limit {
					t.Errorf("z = %.4f: mean of z^W %.5f over %d draws, above the bound %.5f + 5 s.e. = %.5f", z, mean, n, b, limit)
				}
				if checked++; checked%16 == 0 {
					t.Logf("z = %.4f: mean of z^W %.5f, bound %.5f (log ratio %.2f)", z, mean, b, math.Log(b)/math.Log(mean))
				}
			})
			if checked < 8 {
				t.Errorf("only %d values of z checked", checked)
			}
		})
	}
}
