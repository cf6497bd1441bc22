package audit

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

func newMech(t *testing.T, name string, n, k int, r mechanism.Relation) mechanism.Mechanism {
	t.Helper()
	m, err := mechanism.New(mechanism.Params{Name: name, Bins: n, K: k, Epsilon: 1, Delta: 1e-6, Relation: r})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shape names a mechanism's noise pattern at ε = 1 under replace-one.
type shape struct {
	name string
	n, k int
}

func (s shape) String() string { return fmt.Sprintf("%s/N=%d/k=%d", s.name, s.n, s.k) }

func (s shape) mech(t *testing.T) mechanism.Mechanism {
	return newMech(t, s.name, s.n, s.k, mechanism.ReplaceOne)
}

func mustTrie(t *testing.T, m mechanism.Mechanism) *trie {
	t.Helper()
	tr, err := newTrie(m)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// enumerate sums exp(−Σ_edges |value(v) − value(parent)|/b) over every
// assignment of integer values in [−r, r] to the latent vertices: the
// likelihood by brute force.
func enumerate(tr *trie, x []float64, b float64, r int) float64 {
	var latent []int
	for v := 1; v < len(tr.parent); v++ {
		if tr.prefix[v] == 0 {
			latent = append(latent, v)
		}
	}
	value := make([]float64, len(tr.parent))
	for v, i := range tr.prefix {
		if i != 0 {
			value[v] = x[i-1]
		}
	}
	var sum func(j int) float64
	sum = func(j int) float64 {
		if j == len(latent) {
			var e float64
			for v := 1; v < len(tr.parent); v++ {
				e += math.Abs(value[v] - value[tr.parent[v]])
			}
			return math.Exp(-e / b)
		}
		var s float64
		for val := -r; val <= r; val++ {
			value[latent[j]] = float64(val)
			s += sum(j + 1)
		}
		return s
	}
	return sum(0)
}

// The sum-product pass equals brute-force summation over the latent
// vertices: the log-likelihood ratio of two outputs agrees to 1e−9.
func TestLaplaceLikelihoodMatchesEnumeration(t *testing.T) {
	for _, tc := range []shape{{"tree", 4, 0}, {"tree", 3, 0}, {"kary", 2, 3}, {"kary", 4, 7}, {"kary", 5, 3}} {
		t.Run(tc.String(), func(t *testing.T) {
			tr := mustTrie(t, tc.mech(t))
			var latent int
			for v := 1; v < len(tr.parent); v++ {
				latent += b2i(tr.prefix[v] == 0)
			}
			if latent == 0 || latent > 3 {
				t.Fatalf("%d latent vertices: the case should have 1 to 3", latent)
			}
			const b = 1.5
			lik := newLaplaceLikelihood(tr, b, 1)
			x0 := []float64{3, -2, 5, 1, 0}[:tc.n]
			x1 := []float64{-1, 4, 0, 2, -3}[:tc.n]
			got := lik.logLikelihood(x1) - lik.logLikelihood(x0)
			want := math.Log(enumerate(tr, x1, b, 60) / enumerate(tr, x0, b, 60))
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("log-likelihood ratio %v, enumeration gives %v", got, want)
			}
		})
	}
}

// lpMinShift solves min ‖χ‖₁ s.t. Zχ = 1_{[first,last]} as a linear
// programme over the nodes the prefixes use (χ = χ⁺ − χ⁻).
func lpMinShift(t *testing.T, m mechanism.Mechanism, first, last int) float64 {
	t.Helper()
	col := map[int]int{}
	for i := 1; i <= m.Bins(); i++ {
		for _, tm := range m.Terms(i, nil) {
			if _, ok := col[tm.Node]; !ok {
				col[tm.Node] = len(col)
			}
		}
	}
	n, k := m.Bins(), len(col)
	a := mat.NewDense(n, 2*k, nil)
	rhs := make([]float64, n)
	for i := 1; i <= n; i++ {
		for _, tm := range m.Terms(i, nil) {
			a.Set(i-1, col[tm.Node], tm.Coef)
			a.Set(i-1, k+col[tm.Node], -tm.Coef)
		}
		rhs[i-1] = b2f(i >= first && i <= last)
	}
	c := make([]float64, 2*k)
	for j := range c {
		c[j] = 1
	}
	opt, _, err := lp.Simplex(c, a, rhs, 1e-10, nil)
	if err != nil {
		t.Fatalf("LP for [%d, %d]: %v", first, last, err)
	}
	return opt
}

// minShift, the min-sum pass, is the optimum of the linear programme
// over real node shifts for every interval of prefixes.
func TestMinShiftMatchesLinearProgramme(t *testing.T) {
	for _, tc := range []shape{{"tree", 5, 0}, {"tree", 8, 0}, {"kary", 7, 3}, {"kary", 6, 4}, {"gaussian-tree", 6, 0}} {
		t.Run(tc.String(), func(t *testing.T) {
			m := tc.mech(t)
			tr := mustTrie(t, m)
			for first := 1; first <= tc.n; first++ {
				for last := first; last <= tc.n; last++ {
					if got, want := float64(tr.minShift(first, last)), lpMinShift(t, m, first, last); math.Abs(got-want) > 1e-6 {
						t.Errorf("[%d, %d]: min-sum %v, LP %v", first, last, got, want)
					}
				}
			}
		})
	}
}

// The worst pair of the tree needs exactly ⌈(L+1)/2⌉ nodes under
// add/remove (its Δ) and L under replace-one (dp-ecdf Thm 3.1 proves
// L + 1; mechanism's TestTreeSensitivityIsTight finds L); the k-ary
// worst pair never needs more than its Δ.
func TestWorstPairNorms(t *testing.T) {
	for levels := 1; levels <= 6; levels++ {
		for _, r := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
			m := newMech(t, "tree", 1<<levels, 0, r)
			mdl, err := newModel(m, 1)
			if err != nil {
				t.Fatal(err)
			}
			want := levels
			if r == mechanism.AddRemove {
				want = (levels + 2) / 2
			}
			if p := worstPair(mdl, m.Bins(), r, 0); p.Norm != float64(want) {
				t.Errorf("tree L=%d %v: worst pair %+v, want norm %d", levels, r, p, want)
			}
		}
	}
	for _, n := range []int{5, 9, 16, 27} {
		for _, r := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
			m := newMech(t, "kary", n, 0, r)
			mdl, err := newModel(m, 1)
			if err != nil {
				t.Fatal(err)
			}
			sens := m.(interface{ Sensitivity() int }).Sensitivity()
			if p := worstPair(mdl, n, r, 0); p.Norm > float64(sens) || p.Norm < 1 {
				t.Errorf("%s N=%d %v: worst pair norm %v, Δ = %d", m.Name(), n, r, p.Norm, sens)
			}
		}
	}
}

// Cascade Sampling's terms have real coefficients: no trie.
func TestNewTrieRejectsCascade(t *testing.T) {
	_, err := newTrie(newMech(t, "cascade", 8, 0, mechanism.ReplaceOne))
	if !errors.Is(err, ErrPattern) {
		t.Fatalf("newTrie(cascade) = %v, want ErrPattern", err)
	}
}

// laplaceScale inverts the exact variance of the discrete Laplace.
func TestLaplaceScaleInvertsVariance(t *testing.T) {
	for _, scale := range []float64{0.25, 1, 7, 1000, 7 * (1 << 32)} {
		d, err := noise.NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		if got := laplaceScale(d.Variance()); math.Abs(got-scale) > 1e-9*scale {
			t.Errorf("laplaceScale(Var Lap_Z(%v)) = %v", scale, got)
		}
	}
	tree, err := mechanism.New(mechanism.Params{Name: "tree", Bins: 1000, Epsilon: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	const want = 10 / 0.3 // Δ/ε with Δ = L = 10, rounded up by at most an ulp
	if got := laplaceScale(tree.NodeVariance()); math.Abs(got-want) > 1e-9*want {
		t.Errorf("tree node scale %v, recovered %v", want, got)
	}
}

// With a fixed-point unit (Probability: 2^32 integer units per record)
// and a scale of 24 records, the latent values live on a grid of
// b/12 = 2 records; the log-likelihood ratio stays within 0.01 of the
// exact sum over the integer lattice of records.
func TestLaplaceLikelihoodGrid(t *testing.T) {
	tr := mustTrie(t, shape{"tree", 2, 0}.mech(t))
	const b = 24
	grid := newLaplaceLikelihood(tr, b, 1<<32)
	if grid.h != 2 {
		t.Fatalf("grid step %v records, want 2", grid.h)
	}
	x0 := []float64{13, -40}
	x1 := []float64{-80, 4}
	want := math.Log(enumerate(tr, x1, b, 1000) / enumerate(tr, x0, b, 1000))
	got := grid.logLikelihood(x1) - grid.logLikelihood(x0)
	if math.Abs(got-want) > 0.01 {
		t.Errorf("grid log-likelihood ratio %v, lattice %v", got, want)
	}
}
