package smooth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// pathTreeParams are the mechanisms whose pattern is a path-sum tree, at
// bins n: the binary tree, k-ary trees with subtraction (odd and even k,
// and the best k for n) and gaussian-tree (digits 0/1, no subtraction).
func pathTreeParams(n int) []mechanism.Params {
	return []mechanism.Params{
		{Name: "tree", Bins: n, Epsilon: 1},
		{Name: "kary", Bins: n, Epsilon: 1, K: 2},
		{Name: "kary", Bins: n, Epsilon: 1, K: 3},
		{Name: "kary", Bins: n, Epsilon: 1, K: 4},
		{Name: "kary", Bins: n, Epsilon: 1, K: 7},
		{Name: "kary", Bins: n, Epsilon: 1}, // the best k for n
		{Name: "gaussian-tree", Bins: n, Epsilon: 1, Delta: 1e-6},
	}
}

func newMech(t testing.TB, p mechanism.Params) mechanism.Mechanism {
	t.Helper()
	m, err := mechanism.New(p)
	check(t, err)
	return m
}

// The tree built from Terms has the noise covariance of the mechanism:
// the path sums give Cov(y_o(i), y_o(j)) = Σ 1/w over the edges above
// their lowest common ancestor, which must equal (ZZᵀ)_ij = Σ Coef·Coef
// over the nodes prefixes i and j share — the whole of what tree-l2
// needs from the pattern (Σ ∝ ZZᵀ). Every subtree's prefixes are its
// interval.
func TestNewPathTreeHasMechanismCovariance(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8, 13, 64, 100} {
		for _, p := range pathTreeParams(n) {
			m := newMech(t, p)
			t.Run(fmt.Sprintf("%s/N=%d", m.Name(), n), func(t *testing.T) {
				tr, ok := newPathTree(m)
				if !ok {
					t.Fatal("not recognised as a path-sum tree")
				}
				ground := int32(len(tr.parent))
				depth := make([]float64, ground+1)
				for v := ground - 1; v >= 0; v-- { // parents have larger numbers
					depth[v] = depth[tr.parent[v]] + 1/tr.weight[v]
				}
				prob, err := newProblem(make([]float64, n), m)
				check(t, err)
				zzt := covariance(prob)
				for i := range n {
					for j := range n {
						a, b := tr.at[i], tr.at[j]
						for a != b {
							if a < b {
								a = tr.parent[a]
							} else {
								b = tr.parent[b]
							}
						}
						near(t, zzt.At(i, j), depth[a], 1e-12, "prefixes %d, %d", i+1, j+1)
					}
				}
				for v := range ground {
					for i := tr.lo[v]; i <= tr.hi[v]; i++ {
						if !isAncestor(tr, v, tr.at[i]) {
							t.Fatalf("prefix %d in the interval of node %d but not below it", i+1, v)
						}
					}
				}
			})
		}
	}
}

func isAncestor(tr *pathTree, a, v int32) bool {
	for ; v < int32(len(tr.parent)); v = tr.parent[v] {
		if v == a {
			return true
		}
	}
	return false
}

func TestNewPathTreeRejects(t *testing.T) {
	tests := []struct {
		name string
		m    mechanism.Mechanism
	}{
		{"cascade (tent coefficients)", newMech(t, mechanism.Params{Name: "cascade", Bins: 16, Epsilon: 1, Delta: 1e-6})},
		{"node out of range", outOfRangeNode{newMech(t, mechanism.Params{Name: "tree", Bins: 4, Epsilon: 1})}},
		{"two prefixes with one noise", sharedNoise{newMech(t, mechanism.Params{Name: "tree", Bins: 4, Epsilon: 1})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := newPathTree(tt.m); ok {
				t.Error("recognised as a path-sum tree")
			}
		})
	}
}

// sharedNoise gives prefix 2 the terms of prefix 1.
type sharedNoise struct{ mechanism.Mechanism }

func (s sharedNoise) Terms(i int, dst []mechanism.Term) []mechanism.Term {
	if i == 2 {
		i = 1
	}
	return s.Mechanism.Terms(i, dst)
}

// requireKKT checks the exact method's certificate: a feasible curve,
// multipliers of the right sign, complementary slackness — all at
// rounding level, relative to the data.
func requireKKT(t *testing.T, st treeStats) {
	t.Helper()
	if !st.Exact || !st.Converged {
		t.Fatalf("not solved exactly: %+v", st)
	}
	if st.Violation > 1e-12 || st.Gap > 1e-12*max(st.Objective, 1e-300)+1e-18 || st.NegativeMultiplier > 1e-12 {
		t.Fatalf("KKT residual too large: %+v", st)
	}
}

// relClose reports whether got is within rel of want, relatively (with a
// floor at the rounding level of a zero optimum).
func relClose(want, got, rel float64) bool {
	return math.Abs(want-got) <= rel*max(math.Abs(want), 1e-15)
}

// For N ≤ 8 the exact method's objective matches active-set enumeration
// (bruteTree) within 1e−9 relative, and its curve the enumerated optimum,
// for every path-sum mechanism, including N not a power of k.
func TestExactTreeL2MatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 8; n++ {
		for _, p := range pathTreeParams(n) {
			m := newMech(t, p)
			t.Run(fmt.Sprintf("%s/N=%d", m.Name(), n), func(t *testing.T) {
				for trial := range 5 {
					f := noisyCurve(rng, n, 0.5)
					g, st, err := treeL2(f, m, treeOptions{})
					check(t, err)
					if curveViolation(f) == 0 {
						continue
					}
					requireKKT(t, st)
					requireFeasible(t, g)
					prob, err := newProblem(f, m)
					check(t, err)
					want, nu := bruteTree(prob)
					if !relClose(want, st.Objective, 1e-9) {
						t.Fatalf("trial %d: objective %.17g, enumeration %.17g", trial, st.Objective, want)
					}
					nearSlice(t, curveOf(prob, f, nu), g, 1e-7, "trial %d", trial)
				}
			})
		}
	}
}

// For N beyond enumeration the exact objective matches the gradient
// method run to a 1e−12 KKT tolerance within 1e−9 relative, on releases
// of every path-sum mechanism at ε from 0.1 to 10. The gradient's
// objective is that of its iterate before the final repair, so it can
// only differ from the optimum by its residuals.
func TestExactTreeL2MatchesGradient(t *testing.T) {
	for _, n := range []int{64, 300, 1024} {
		hist := poissonHist(t, 3, n, uint64(n))
		for _, p := range pathTreeParams(n) {
			for _, eps := range []float64{0.1, 1, 10} {
				p.Epsilon = eps
				m := newMech(t, p)
				t.Run(fmt.Sprintf("%s/N=%d/ε=%g", m.Name(), n, eps), func(t *testing.T) {
					rel, err := ecdf.NewPrivate(m, hist, noise.Seed{byte(n), byte(eps * 10), m.Name()[0]})
					check(t, err)
					raw := rel.Curve()
					g, st, err := treeL2(raw, m, treeOptions{})
					check(t, err)
					requireKKT(t, st)
					requireFeasible(t, g)
					if curveViolation(raw) == 0 {
						nearSlice(t, raw, g, 0, "feasible release")
						return
					}
					gg, sg, err := treeL2(raw, m, treeOptions{Tolerance: 1e-12, Gradient: true})
					check(t, err)
					if !sg.Converged || sg.Exact {
						t.Fatalf("gradient: %+v", sg)
					}
					if !relClose(sg.Objective, st.Objective, 1e-9) {
						t.Fatalf("objective %.17g, gradient %.17g", st.Objective, sg.Objective)
					}
					nearSlice(t, gg, g, 1e-6, "curve")
				})
			}
		}
	}
}

// For N = 16 and 32 the exact solution passes the dense KKT certificate
// of its own active set (certify: least-norm solution, non-negative
// multipliers, feasibility, all by Cholesky), objective within 1e−9.
func TestExactTreeL2PassesKKTCertificate(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{16, 32} {
		for _, p := range pathTreeParams(n) {
			m := newMech(t, p)
			t.Run(fmt.Sprintf("%s/N=%d", m.Name(), n), func(t *testing.T) {
				for _, sd := range []float64{0.05, 0.2, 0.5} {
					f := noisyCurve(rng, n, sd)
					f[n/2], f[n/2+1] = 0.6, 0.4 // at least one active constraint
					g, st, err := treeL2(f, m, treeOptions{})
					check(t, err)
					requireKKT(t, st)
					prob, err := newProblem(f, m)
					check(t, err)
					nu := leastNormCorrection(t, prob, f, g)
					star := certify(t, prob, nu)
					if obj := dot(star, star) / 2; !relClose(obj, st.Objective, 1e-9) {
						t.Fatalf("sd %g: objective %.17g, certificate %.17g", sd, st.Objective, obj)
					}
					nearSlice(t, curveOf(prob, f, star), g, 1e-9, "sd %g", sd)
				}
			})
		}
	}
}

// leastNormCorrection returns the least-norm ν with F̂ + Zν = g, the node
// correction of a curve (exact: Z has full row rank).
func leastNormCorrection(t *testing.T, p *problem, f, g []float64) []float64 {
	t.Helper()
	z := denseZ(p)
	d := make([]float64, len(f))
	for i := range d {
		d[i] = g[i] - f[i]
	}
	rows := make([]int, len(f))
	for i := range rows {
		rows[i] = i
	}
	nu, ok := leastNorm(z, d, rows, p.cols)
	if !ok {
		t.Fatal("Z does not reach the curve")
	}
	return nu
}

// The incremental solve (reusing the subtrees no changed row touches)
// gives the same curve and multipliers as a fresh solve, over random
// sequences of active sets on a kary(k=3) and a tree release.
func TestGLSSolverIncrementalMatchesFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const n = 200
	for _, p := range []mechanism.Params{{Name: "tree", Bins: n, Epsilon: 1}, {Name: "kary", Bins: n, Epsilon: 1, K: 3}} {
		m := newMech(t, p)
		t.Run(m.Name(), func(t *testing.T) {
			tr, ok := newPathTree(m)
			if !ok {
				t.Fatal("not a path-sum tree")
			}
			f := noisyCurve(rng, n, 0.1)
			inc := newGLSSolver(tr, f)
			act := make([]bool, n+1)
			for step := range 40 {
				for range 1 + rng.IntN(20) { // flip a few rows, ends included
					r := rng.IntN(n + 1)
					act[r] = !act[r]
				}
				if !slices.Contains(act, false) {
					act[rng.IntN(n+1)] = false
				}
				inc.solve(act)
				fresh := newGLSSolver(tr, f)
				fresh.solve(act)
				nearSlice(t, fresh.g, inc.g, 1e-12, "step %d: curve", step)
				nearSlice(t, fresh.lambda, inc.lambda, 1e-9, "step %d: multipliers", step)
				fresh.release()
			}
			inc.release()
		})
	}
}

// Cascade is not a path-sum tree: tree-l2 solves it by the gradient
// method, to its tolerance.
func TestTreeL2CascadeUsesGradient(t *testing.T) {
	m := newMech(t, mechanism.Params{Name: "cascade", Bins: 32, Epsilon: 1, Delta: 1e-6})
	f := noisyCurve(rand.New(rand.NewPCG(17, 18)), 32, 0.2)
	_, st, err := treeL2(f, m, treeOptions{})
	check(t, err)
	if st.Exact || !st.Converged {
		t.Errorf("cascade: %+v, want the converged gradient method", st)
	}
}
