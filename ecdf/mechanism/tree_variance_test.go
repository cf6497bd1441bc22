package mechanism

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestTreePrefixVarianceMonteCarlo checks PrefixVariance and MeanVariance
// of the tree at the setting of EXPERIMENTS.md Fig. 4's ε = 10 point
// (N = 2^15, L = 15, node scale Δ/ε = L/ε = 1.5) against the prefix noises
// of 4000 releases, each read at the same 12 prefixes (1, N and 10 drawn
// uniformly). Per prefix, the sample mean of η(i)² must lie within 5
// standard errors (from the sample fourth moment) of PrefixVariance(i);
// over prefixes, the per-release average of η(i)², i.i.d. across
// releases, within 5 standard errors of MeanVariance, which for the tree
// is the expectation of the ECDF MSE times n² (the experiment's dashed
// line). The same average must reject a doubled node scale. The noises
// are drawn node by node (termNoise), as a release would draw them.
func TestTreePrefixVarianceMonteCarlo(t *testing.T) {
	const releases = 4000
	m := mustTree(t, 1<<15, 10, ReplaceOne)
	rng := rand.New(rand.NewPCG(15, 10))
	prefixes := []int{1, m.Bins()}
	for range 10 {
		prefixes = append(prefixes, 1+rng.IntN(m.Bins()))
	}
	squares := make([][]float64, len(prefixes)) // squares[j][r] = η_r(prefixes[j])²
	for j := range squares {
		squares[j] = make([]float64, releases)
	}
	averages := make([]float64, releases) // averages[r] = mean_j η_r(prefixes[j])²
	for r := range releases {
		var seed [32]byte
		binary.LittleEndian.PutUint64(seed[16:], uint64(r)+0x7472656576)
		for j, i := range prefixes {
			x := float64(termNoise(m, seed, i))
			squares[j][r] = x * x
			averages[r] += x * x / float64(len(prefixes))
		}
	}
	for j, i := range prefixes {
		got, se := meanAndStdErr(squares[j])
		if want := m.PrefixVariance(i); math.Abs(got-want) > 5*se {
			t.Errorf("prefix %d: Monte-Carlo variance %.2f ± %.2f, PrefixVariance %.2f", i, got, se, want)
		}
	}
	got, se := meanAndStdErr(averages)
	want := m.MeanVariance()
	t.Logf("mean prefix variance %.2f ± %.2f over %d releases, MeanVariance %.2f (z = %.2f)",
		got, se, releases, want, (got-want)/se)
	if math.Abs(got-want) > 5*se {
		t.Errorf("Monte-Carlo mean prefix variance %.2f ± %.2f, MeanVariance %.2f", got, se, want)
	}
	doubled := mustTree(t, 1<<15, 5, ReplaceOne) // node scale 3.0
	if math.Abs(got-doubled.MeanVariance()) < 5*se {
		t.Errorf("Monte-Carlo mean prefix variance %.2f ± %.2f also fits the doubled scale's %.2f",
			got, se, doubled.MeanVariance())
	}
}

// termNoise returns NewRelease(seed).PrefixNoise(i) of a tree or k-ary
// mechanism m while drawing only the nodes prefix i uses: the signed sum
// over Terms(i) of each node's draw from its own stream (equal to the
// release's by TestTreeReleaseSumsItsTerms and
// TestKAryReleaseSumsItsTerms). Monte-Carlo tests over thousands of
// releases use it to skip the other nodes a release draws.
func termNoise(m Mechanism, seed [32]byte, i int) int64 {
	var domain uint32
	var dist sampler
	switch m := m.(type) {
	case *tree:
		domain, dist = treeNoiseDomain, m.node
	case *kary:
		domain, dist = m.domain, m.node
	default:
		panic(fmt.Sprintf("termNoise: %T has non-integer terms", m))
	}
	var sum int64
	for _, term := range m.Terms(i, nil) {
		sum += int64(term.Coef) * dist.Sample(nodeStream(seed, domain, term.Node))
	}
	return sum
}

// meanAndStdErr returns the sample mean of xs and its standard error,
// the sample standard deviation over √n.
func meanAndStdErr(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	n := float64(len(xs))
	mean /= n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}
