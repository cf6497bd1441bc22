package mechanism

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

func mustPartitioned(t testing.TB, p Params) *partitioned {
	t.Helper()
	p.Name = "partitioned"
	m, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return m.(*partitioned)
}

// partAddShift returns, for each node of part (a tree or k-ary
// mechanism), the shift χ of its true node values that explains adding
// one instance in the part's bin a: the used nodes containing a (k-ary,
// usedNodes) or the suffix χ⁺ of dp-ecdf Lemma 1 (tree), and the part's
// node scale b.
func partAddShift(t *testing.T, part Mechanism) (shift func(a int) nodeShift, scale float64) {
	switch part := part.(type) {
	case *kary:
		nodes := usedNodes(t, part)
		return func(a int) nodeShift {
			chi := nodeShift{}
			for key, n := range nodes {
				if n[0] <= a && a <= n[1] {
					chi[key-1] = 1
				}
			}
			return chi
		}, part.node.(*noise.DiscreteLaplace).Scale()
	case *tree:
		d := newDyadicShifts(part)
		return func(a int) nodeShift {
			chi := nodeShift{}
			d.addSuffix(chi, 1<<part.Levels(), 1<<part.Levels()-a+1)
			return chi
		}, part.Scale()
	}
	t.Fatalf("unexpected part %s", part.Name())
	return nil, 0
}

// TestPartitionedPrivacy makes the parallel-composition proof
// executable: for every added instance (add/remove) and every move of
// one instance between two bins (replace-one), it builds the shift χ of
// the parts' node values — the part's own shift for an added instance
// (partAddShift), the difference of two for a move, in one part or in
// two — checks that the partitioned Terms map it to the change of every
// prefix, and that the privacy loss Σ_v |χ_v|/b_v of the Laplace node
// noises (b_v the scale of v's part) is at most ε, in exact arithmetic.
func TestPartitionedPrivacy(t *testing.T) {
	for _, rel := range []Relation{AddRemove, ReplaceOne} {
		for _, bins := range []int{1, 2, 3, 5, 13, 40, 75} {
			for _, eps := range []float64{0.3, 1} {
				m := mustPartitioned(t, Params{Bins: bins, Epsilon: eps, Relation: rel})
				shifts := make([]func(int) nodeShift, len(m.parts))
				rates := make([]*big.Rat, len(m.parts)) // 1/b per part
				for j, part := range m.parts {
					var b float64
					shifts[j], b = partAddShift(t, part)
					rates[j] = new(big.Rat).Inv(ratOf(b))
				}
				// add returns the node shift of adding one instance
				// (sign 1) or removing it (−1) in global bin a, keyed by
				// the partitioned node numbering.
				add := func(chi nodeShift, a, sign int) {
					j, local := m.part(a)
					for v, c := range shifts[j](local) {
						chi[v+m.nodeOff[j]] += sign * c
					}
				}
				check := func(chi nodeShift, change func(i int) int, what string) {
					for i := 1; i <= bins; i++ {
						var got float64
						for _, term := range m.Terms(i, nil) {
							j := partOfNode(m, term.Node)
							got += term.Coef / m.coef[j] * float64(chi[term.Node])
						}
						if math.Abs(got-float64(change(i))) > 1e-9 {
							t.Fatalf("%s N=%d: %s: Z·χ at prefix %d = %v, want %d", m.Name(), bins, what, i, got, change(i))
						}
					}
					loss := new(big.Rat)
					for v, c := range chi {
						loss.Add(loss, new(big.Rat).Mul(big.NewRat(int64(max(c, -c)), 1), rates[partOfNode(m, v)]))
					}
					if loss.Cmp(ratOf(eps)) > 0 {
						f, _ := loss.Float64()
						t.Fatalf("%s N=%d %v ε=%v: %s: privacy loss Σ|χ_v|/b_v = %v > ε", m.Name(), bins, rel, eps, what, f)
					}
				}
				for a := 1; a <= bins; a++ {
					if rel == AddRemove {
						chi := nodeShift{}
						add(chi, a, 1)
						check(chi, func(i int) int { return b2i(i >= a) }, "add an instance")
						continue
					}
					for b := a + 1; b <= bins; b++ {
						chi := nodeShift{} // the instance moves from bin b to bin a
						add(chi, a, 1)
						add(chi, b, -1)
						check(chi, func(i int) int { return b2i(a <= i && i < b) }, "move an instance")
					}
				}
			}
		}
	}
}

// partOfNode returns the part whose node variables include v.
func partOfNode(m *partitioned, v int) int {
	j := 0
	for v >= m.nodeOff[j+1] {
		j++
	}
	return j
}

// TestPartitionedVariance checks the exact variances against the
// structure they claim: PrefixVariance(i) is NodeVariance·Σ Coef² over
// prefix i's terms (the parts' nodes scaled to one variance), the sum of
// the earlier parts' totals' and the part's own prefix variance, and
// MeanVariance is their mean; and that the parts are cut by
// partitionBins.
func TestPartitionedVariance(t *testing.T) {
	for _, rel := range []Relation{AddRemove, ReplaceOne} {
		for _, bins := range []int{1, 2, 3, 7, 38, 75, 151, 1000} {
			m := mustPartitioned(t, Params{Bins: bins, Epsilon: 1, Relation: rel, Unit: 3})
			if got, want := m.partBins, partitionBins(bins); !slices.Equal(got, want) || m.Bins() != bins {
				t.Fatalf("N=%d: parts %v (N = %d), want %v", bins, got, m.Bins(), want)
			}
			var sum float64
			for i := 1; i <= bins; i++ {
				var sq float64
				for _, term := range m.Terms(i, nil) {
					sq += term.Coef * term.Coef
				}
				v := m.PrefixVariance(i)
				if want := m.NodeVariance() * sq; math.Abs(v-want) > 1e-9*want {
					t.Fatalf("%s %v: prefix %d: variance %v, NodeVariance·ΣCoef² = %v", m.Name(), rel, i, v, want)
				}
				j, local := m.part(i)
				want := m.parts[j].PrefixVariance(local)
				for l := range j {
					want += m.parts[l].PrefixVariance(m.partBins[l])
				}
				if math.Abs(v-want) > 1e-9*want {
					t.Fatalf("%s %v: prefix %d: variance %v, parts give %v", m.Name(), rel, i, v, want)
				}
				sum += v
			}
			if mean := sum / float64(bins); math.Abs(m.MeanVariance()-mean) > 1e-9*mean {
				t.Errorf("%s %v: MeanVariance %v, mean of PrefixVariance %v", m.Name(), rel, m.MeanVariance(), mean)
			}
		}
	}
}

// TestPartitionedRelease checks that a release adds, to every prefix,
// the earlier parts' total noise and its own part's noise, each part
// drawn from its own derived seed (partSeed): distinct seeds per part,
// equal noise for equal seeds.
func TestPartitionedRelease(t *testing.T) {
	m := mustPartitioned(t, Params{Bins: 40, Epsilon: 0.5, Relation: AddRemove})
	seed := karySeed(3)
	rel := m.NewRelease(seed)
	again := m.NewRelease(seed)
	var before int64
	seeds := map[[32]byte]bool{}
	for j, part := range m.parts {
		s := partSeed(seed, j)
		if seeds[s] || s == seed {
			t.Fatalf("part %d: seed %x reused", j, s)
		}
		seeds[s] = true
		pr := part.NewRelease(s)
		for local := 1; local <= m.partBins[j]; local++ {
			i := m.offsets[j] + local
			if got, want := rel.PrefixNoise(i), before+pr.PrefixNoise(local); got != want || again.PrefixNoise(i) != got {
				t.Fatalf("prefix %d (part %d, local %d): noise %d (again %d), want %d", i, j, local, got, again.PrefixNoise(i), want)
			}
		}
		before += pr.PrefixNoise(m.partBins[j])
	}
}

func TestPartitionedRejectsBadParams(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Params
		want string
	}{
		{"delta", Params{Bins: 40, Epsilon: 1, Delta: 1e-6}, "pure ε-DP"},
		{"k", Params{Bins: 40, Epsilon: 1, K: 3}, "own arity"},
		{"bins", Params{Bins: 0, Epsilon: 1}, "bins 0"},
		{"huge noise", Params{Bins: 40, Epsilon: 1e-12, Unit: 1 << 32}, "above 2^50"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.p.Name = "partitioned"
			_, err := New(c.p)
			if !errors.Is(err, ErrInvalidParams) || err == nil || !strings.HasPrefix(err.Error(), "mechanism: partitioned") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New(%+v): error %v, want one naming %q", c.p, err, c.want)
			}
		})
	}
}

// TestPartitionBins: a sixth of the grid at each end, the rest between.
func TestPartitionBins(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []int
	}{{1, []int{1}}, {2, []int{2}}, {3, []int{1, 1, 1}}, {12, []int{2, 8, 2}}, {38, []int{7, 24, 7}}, {151, []int{26, 99, 26}}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			if got := partitionBins(tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("parts %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPartitionedMonteCarlo: the noise of R releases from random seeds
// has, at every prefix, the variance PrefixVariance claims, under both
// relations. The sample variance of R draws has standard error at most
// σ²·√((κ − 1)/R) for noise of kurtosis κ ≤ 6 (the Laplace law's; sums
// of independent Laplace nodes have less), and the test allows 4 of
// them.
func TestPartitionedMonteCarlo(t *testing.T) {
	const draws, bins = 4000, 12
	rng := rand.New(rand.NewPCG(18, 6))
	for _, rel := range []Relation{AddRemove, ReplaceOne} {
		t.Run(rel.String(), func(t *testing.T) {
			m := mustPartitioned(t, Params{Bins: bins, Epsilon: 1, Relation: rel})
			sum, sum2 := make([]float64, bins), make([]float64, bins)
			for range draws {
				var seed [32]byte
				for k := range seed {
					seed[k] = byte(rng.Uint32())
				}
				r := m.NewRelease(seed)
				for i := 1; i <= bins; i++ {
					v := float64(r.PrefixNoise(i))
					sum[i-1] += v
					sum2[i-1] += v * v
				}
			}
			for i := 1; i <= bins; i++ {
				mean := sum[i-1] / draws
				got, want := sum2[i-1]/draws-mean*mean, m.PrefixVariance(i)
				if tol := 4 * want * math.Sqrt(5.0/draws); math.Abs(got-want) > tol {
					t.Errorf("prefix %d: noise variance %g, want %g ± %g", i, got, want, tol)
				}
			}
		})
	}
}
