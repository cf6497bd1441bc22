package mechanism

import (
	"math"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/stattest"
)

// TestDrawReadsFixedWords: a node's draw at release creation computes
// the same number of keystream blocks whatever noise it draws
// (noise.SampleFixed: WordBudget()/8 + 1), reads the same number of words
// from a generic Source (WordBudget()), and draws the same value as the
// sampler alone. Without the padding the words
// read grow with |η|: their correlation with |η| over the draws is above
// 5/√n, five standard errors of a correlation under independence, which
// shows the test has power.
func TestDrawReadsFixedWords(t *testing.T) {
	const n = 10000
	lap := func(scale float64) sampler {
		d, err := noise.NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	gauss := func(sigma2 float64) sampler {
		d, err := noise.NewDiscreteGaussian(sigma2)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name string
		s    sampler
	}{
		{"laplace 0.5", lap(0.5)}, {"laplace 100", lap(100)},
		{"gaussian 1", gauss(1)}, {"gaussian 10^4", gauss(1e4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seed noise.Seed
			size, words := make([]float64, n), make([]float64, n)
			for node := range n {
				alone := &countedSource{src: seed.Stream(1, uint64(node))}
				v := tc.s.Sample(alone)
				padded := &countedSource{src: seed.Stream(1, uint64(node))}
				if got := noise.SampleFixed(tc.s, padded); got != v {
					t.Fatalf("node %d: padded draw %d, the sampler alone %d", node, got, v)
				}
				if want := max(tc.s.WordBudget(), alone.n); padded.n != want {
					t.Fatalf("node %d (η = %d): %d words read, want %d (the sampler alone read %d)", node, v, padded.n, want, alone.n)
				}
				st := seed.Stream(1, uint64(node))
				if got := noise.SampleFixed(tc.s, st); got != v {
					t.Fatalf("node %d: fixed-work draw %d, the sampler alone %d", node, got, v)
				}
				if want := uint64(tc.s.WordBudget()/8 + 1); st.Blocks() != want {
					t.Fatalf("node %d (η = %d): %d blocks computed, want %d (the sampler alone read %d words)", node, v, st.Blocks(), want, alone.n)
				}
				size[node], words[node] = math.Abs(float64(v)), float64(alone.n)
			}
			if r, _, _ := stattest.Regression(size, words); r <= 5/math.Sqrt(n) {
				t.Errorf("correlation of |η| and the words the sampler alone reads %.3f ≤ %.3f: the test has no power", r, 5/math.Sqrt(n))
			} else {
				t.Logf("unpadded: correlation of |η| and words %.3f", r)
			}
		})
	}
}

// countedSource counts the words read from src.
type countedSource struct {
	src noise.Source
	n   int
}

func (c *countedSource) Uint64() uint64 { c.n++; return c.src.Uint64() }

// TestSimulatedReleaseIsTheRelease: the release drawn without fixed work
// (SimulatedRelease, for simulations) has the same noise as NewRelease,
// for every mechanism, and reads fewer words.
func TestSimulatedReleaseIsTheRelease(t *testing.T) {
	streams, words := countingStreams(t)
	for _, p := range allMechanisms(100, 0.5, 1e-6, 1) {
		m, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		*streams, *words = 0, 0
		fixed := m.NewRelease(karySeed(3))
		fixedWords := *words
		*words = 0
		sim := SimulatedRelease(m, karySeed(3))
		for i := 1; i <= m.Bins(); i++ {
			if a, b := fixed.PrefixNoise(i), sim.PrefixNoise(i); a != b {
				t.Fatalf("%s: prefix %d: %d with fixed work, %d simulated", m.Name(), i, a, b)
			}
		}
		if *words >= fixedWords {
			t.Errorf("%s: the simulated release read %d words, the fixed-work one %d", m.Name(), *words, fixedWords)
		}
	}
}
