package audit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

func newMech(t *testing.T, name string, n, k int, r mechanism.Relation) mechanism.Mechanism {
	t.Helper()
	delta := 1e-6
	if name == "partitioned" {
		delta = 0 // pure only
	}
	m, err := mechanism.New(mechanism.Params{Name: name, Bins: n, K: k, Epsilon: 1, Delta: delta, Relation: r})
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

// enumerate sums exp(−Σ_edges |value(v) − value(parent)|/b[v]) over
// every assignment of integer values in [−r, r] to the latent vertices:
// the likelihood by brute force.
func enumerate(tr *trie, x []float64, b []float64, r int) float64 {
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
				e += math.Abs(value[v]-value[tr.parent[v]]) / b[v]
			}
			return math.Exp(-e)
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

// edgeScales returns b·coef[v] for every vertex of tr: one scale b for
// coefficients ±1, and scales in the ratio of the coefficients for the
// partitioned mechanism's parts.
func edgeScales(tr *trie, b float64) []float64 {
	s := make([]float64, len(tr.parent))
	for v := range s {
		s[v] = b * tr.coef[v]
	}
	return s
}

// The sum-product pass equals brute-force summation over the latent
// vertices: the log-likelihood ratio of two outputs agrees to 1e−9, with
// one node scale and with unequal ones (1.5 and 2.25 on alternate
// edges, as the partitioned mechanism's parts have).
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
			for _, unequal := range []bool{false, true} {
				b := edgeScales(tr, 1.5)
				for v := range b {
					if unequal && v%2 == 1 {
						b[v] *= 1.5
					}
				}
				lik := newLaplaceLikelihood(tr, b, 1)
				x0 := []float64{3, -2, 5, 1, 0}[:tc.n]
				x1 := []float64{-1, 4, 0, 2, -3}[:tc.n]
				got := lik.logLikelihood(x1) - lik.logLikelihood(x0)
				want := math.Log(enumerate(tr, x1, b, 60) / enumerate(tr, x0, b, 60))
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("unequal scales %v: log-likelihood ratio %v, enumeration gives %v", unequal, got, want)
				}
			}
		})
	}
}

// mustModel is newModel(m, 1), failing the test on an error.
func mustModel(t *testing.T, m mechanism.Mechanism) model {
	t.Helper()
	mdl, err := newModel(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	return mdl
}

// lpMinShift solves min Σ w_v·|χ_v| s.t. Zχ = 1_{[first,last]} as a
// linear programme over the nodes the prefixes use (χ = χ⁺ − χ⁻), in
// node-noise units (a term's variable times |Coef|), w_v = b/b_v with b_v
// node v's Laplace scale, b that of a node of coefficient ±1.
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
	b := laplaceScale(m.NodeVariance())
	for i := 1; i <= n; i++ {
		for _, tm := range m.Terms(i, nil) {
			w := math.Abs(tm.Coef) * b / laplaceScale(m.NodeVariance()*tm.Coef*tm.Coef)
			c[col[tm.Node]], c[k+col[tm.Node]] = w, w
		}
	}
	opt, _, err := lp.Simplex(c, a, rhs, 1e-10, nil)
	if err != nil {
		t.Fatalf("LP for [%d, %d]: %v", first, last, err)
	}
	return opt
}

// minShift, the min-sum pass, is the optimum of the linear programme
// over real node shifts for every interval of prefixes, with the
// partitioned mechanism's weights too (at N = 48 its middle part has
// larger node scales than its ends; there only the intervals starting at
// prefix 1 or ending at N, to keep the test short).
func TestMinShiftMatchesLinearProgramme(t *testing.T) {
	for _, tc := range []shape{{"tree", 5, 0}, {"tree", 8, 0}, {"kary", 7, 3}, {"kary", 6, 4}, {"gaussian-tree", 6, 0}, {"partitioned", 12, 0}, {"partitioned", 48, 0}} {
		t.Run(tc.String(), func(t *testing.T) {
			m := tc.mech(t)
			tr := mustTrie(t, m)
			w := make([]float64, len(tr.parent))
			for v := range w {
				w[v] = 1
			}
			if mdl, ok := mustModel(t, m).(*laplaceModel); ok {
				w = mdl.weights
			}
			if tc.n == 48 && !slices.ContainsFunc(w[1:], func(x float64) bool { return x != 1 }) {
				t.Fatalf("%s: every node has the same scale; the case should have unequal ones", m.Name())
			}
			for first := 1; first <= tc.n; first++ {
				for last := first; last <= tc.n; last++ {
					if tc.n > 20 && first > 1 && last < tc.n {
						continue
					}
					if got, want := tr.minShift(first, last, w), lpMinShift(t, m, first, last); math.Abs(got-want) > 1e-6 {
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
	grid := newLaplaceLikelihood(tr, edgeScales(tr, b), 1<<32)
	if grid.h != 2 {
		t.Fatalf("grid step %v records, want 2", grid.h)
	}
	x0 := []float64{13, -40}
	x1 := []float64{-80, 4}
	want := math.Log(enumerate(tr, x1, edgeScales(tr, b), 1000) / enumerate(tr, x0, edgeScales(tr, b), 1000))
	got := grid.logLikelihood(x1) - grid.logLikelihood(x0)
	if math.Abs(got-want) > 0.01 {
		t.Errorf("grid log-likelihood ratio %v, lattice %v", got, want)
	}
}
