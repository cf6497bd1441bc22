package hierarchy

import (
	"math"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/stattest"
)

// TestCountingOnTreesDrawsFixedWork: every noise draw of a
// counting-on-trees release computes WordBudget()/8 + 1 keystream blocks
// of its one stream whatever the value drawn (noise.SampleFixed), and
// the releases are those of the known-answer test
// (TestCountingOnTreesKnownAnswers passes unchanged). Without the fixed
// work the words a draw reads grow with |η|/scale: their correlation
// over the releases' draws is above 5/√n, five standard errors of a
// correlation under independence, which shows the test has power.
func TestCountingOnTreesDrawsFixedWork(t *testing.T) {
	m, err := NewCountingOnTrees(Params{Bins: 37, Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.5, Relation: mechanism.AddRemove})
	if err != nil {
		t.Fatal(err)
	}
	saved := drawNoise
	t.Cleanup(func() { drawNoise = saved })
	var size, words []float64
	fixed := 0
	for seed := range 40 {
		s := noise.Seed{byte(seed), 31}
		drawNoise = func(d noise.FixedWorkSampler, src noise.Source) int64 {
			st := src.(*noise.Stream)
			before := st.Blocks()
			v := noise.SampleFixed(d, src)
			if got, want := st.Blocks()-before, uint64(d.WordBudget()/8+1); got != want {
				t.Fatalf("seed %d: a draw of %d computed %d blocks, want %d", seed, v, got, want)
			}
			fixed++
			return v
		}
		withFixed, err := m.Release(katHist(), s)
		if err != nil {
			t.Fatal(err)
		}
		drawNoise = func(d noise.FixedWorkSampler, src noise.Source) int64 {
			c := &countWords{src: src}
			v := d.Sample(c)
			scale := d.(*noise.DiscreteLaplace).Scale()
			size, words = append(size, math.Abs(float64(v))/scale), append(words, float64(c.n))
			return v
		}
		plain, err := m.Release(katHist(), s)
		if err != nil {
			t.Fatal(err)
		}
		for l := range plain {
			for j := range plain[l] {
				if plain[l][j] != withFixed[l][j] {
					t.Fatalf("seed %d: node (%d, %d) released %d with fixed work, %d without", seed, l, j, withFixed[l][j], plain[l][j])
				}
			}
		}
	}
	n := float64(len(size))
	if r, _, _ := stattest.Regression(size, words); r <= 5/math.Sqrt(n) {
		t.Errorf("correlation of |η|/scale and the words the sampler alone reads %.3f ≤ %.3f over %d draws: the test has no power", r, 5/math.Sqrt(n), len(size))
	} else {
		t.Logf("%d fixed-work draws; unpadded: correlation of |η|/scale and words %.3f over %d draws", fixed, r, len(size))
	}
}

// countWords counts the words read from src.
type countWords struct {
	src noise.Source
	n   int
}

func (c *countWords) Uint64() uint64 { c.n++; return c.src.Uint64() }
