package smooth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

func noisyCurve(rng *rand.Rand, n int, sd float64) []float64 {
	f := make([]float64, n)
	for i := range f {
		f[i] = float64(i+1)/float64(n) + sd*rng.NormFloat64()
	}
	return f
}

// check stops the test on err.
func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// near stops the test unless |want − got| ≤ tol (NaN fails).
func near(t *testing.T, want, got, tol float64, format string, args ...any) {
	t.Helper()
	if !(math.Abs(want-got) <= tol) {
		t.Fatalf("%s: got %v, want %v ± %v", fmt.Sprintf(format, args...), got, want, tol)
	}
}

// nearSlice is near for each element.
func nearSlice(t *testing.T, want, got []float64, tol float64, format string, args ...any) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d points, want %d", fmt.Sprintf(format, args...), len(got), len(want))
	}
	for i := range want {
		near(t, want[i], got[i], tol, "%s: point %d", fmt.Sprintf(format, args...), i)
	}
}

// requireFeasible stops the test unless g is a monotone curve in [0, 1].
func requireFeasible(t *testing.T, g []float64) {
	t.Helper()
	if !(g[0] >= 0 && g[len(g)-1] <= 1) {
		t.Fatalf("curve leaves [0, 1]: %v", g)
	}
	for i := 1; i < len(g); i++ {
		if !(g[i-1] <= g[i]) {
			t.Fatalf("not monotone at %d: %v", i, g)
		}
	}
}

// bruteL1 is the exact bounded L1 isotonic regression by dynamic
// programming over candidate values (an optimal solution takes values among
// the data and the bounds).
func bruteL1(f []float64) float64 {
	cand := []float64{0, 1}
	for _, v := range f {
		cand = append(cand, clip(v))
	}
	slices.Sort(cand)
	cost := make([]float64, len(cand))
	for i, v := range f {
		best := math.Inf(1)
		for k, c := range cand {
			best = min(best, cost[k])
			if i == 0 {
				best = 0
			}
			cost[k] = best + math.Abs(c-v)
		}
	}
	return slices.Min(cost)
}

func l1(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

func TestPointwiseL1IsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 400 {
		n := 1 + trial%40
		f := noisyCurve(rng, n, 0.4)
		if trial%2 == 1 { // ties make many L1 optima: round to a coarse lattice
			for i := range f {
				f[i] = math.Round(f[i]*5) / 5
			}
		}
		g := pointwiseL1(f)
		requireFeasible(t, g)
		near(t, bruteL1(f), l1(f, g), 1e-12, "L1 distance of f=%v g=%v", f, g)
	}
}

// bruteL2 minimises Σ(z−f)² over bounded monotone z by enumerating which
// adjacent pairs are pooled and which values are clipped: every optimum is
// a sequence of constant blocks each at its mean, clipped.
func bruteL2(f []float64) float64 { return bruteL2Blocks(f, false) }

// bruteL2Top is bruteL2 under the constraint z_N = 1: the block holding
// the last point is at 1, the others at their clipped means.
func bruteL2Top(f []float64) float64 { return bruteL2Blocks(f, true) }

// bruteL2Blocks enumerates the blocks for bruteL2 and, if top, pins the
// last block at 1 (bruteL2Top).
func bruteL2Blocks(f []float64, top bool) float64 {
	n := len(f)
	best := math.Inf(1)
	for mask := 0; mask < 1<<(n-1); mask++ {
		z := make([]float64, n)
		start := 0
		for i := 1; i <= n; i++ {
			if i == n || mask&(1<<(i-1)) == 0 {
				mean := 0.0
				for _, v := range f[start:i] {
					mean += v
				}
				mean = clip(mean / float64(i-start))
				if top && i == n {
					mean = 1
				}
				for k := start; k < i; k++ {
					z[k] = mean
				}
				start = i
			}
		}
		if slices.IsSorted(z) {
			best = min(best, sqDist(f, z))
		}
	}
	return best
}

func TestPointwiseL2IsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + trial%10
		f := noisyCurve(rng, n, 0.4)
		g := PointwiseL2(f)
		requireFeasible(t, g)
		near(t, bruteL2(f), sqDist(f, g), 1e-12, "squared distance of f=%v g=%v", f, g)
	}
}

// bruteTree solves min ½‖ν‖² s.t. Aν ≥ b by enumerating active sets: the
// optimum is the least-norm solution of its active equalities, so it is
// the feasible candidate of least norm.
func bruteTree(p *problem) (float64, []float64) {
	a := denseA(p)
	best, bestNu := math.Inf(1), []float64(nil)
	for mask := 0; mask < 1<<p.rows; mask++ {
		var rows []int
		for r := 0; r < p.rows; r++ {
			if mask&(1<<r) != 0 {
				rows = append(rows, r)
			}
		}
		nu, ok := leastNorm(a, p.b, rows, p.cols)
		if !ok || p.violation(nu) > 1e-9 {
			continue
		}
		if sq := floats.Dot(nu, nu) / 2; sq < best {
			best, bestNu = sq, nu
		}
	}
	return best, bestNu
}

func denseA(p *problem) *mat.Dense {
	a := mat.NewDense(p.rows, p.cols, nil)
	for r := 0; r < p.rows; r++ {
		for k := p.aPtr[r]; k < p.aPtr[r+1]; k++ {
			a.Set(r, p.aIdx[k], p.aVal[k])
		}
	}
	return a
}

// leastNorm returns the least-norm ν with A_S ν = b_S, or false when that
// system is inconsistent.
func leastNorm(a *mat.Dense, b []float64, rows []int, cols int) ([]float64, bool) {
	nu := make([]float64, cols)
	if len(rows) == 0 {
		return nu, true
	}
	as := mat.NewDense(len(rows), cols, nil)
	bs := mat.NewVecDense(len(rows), nil)
	for i, r := range rows {
		as.SetRow(i, a.RawRowView(r))
		bs.SetVec(i, b[r])
	}
	var svd mat.SVD
	if !svd.Factorize(as, mat.SVDThin) {
		return nil, false
	}
	var x mat.Dense
	svd.SolveTo(&x, bs, svd.Rank(1e-10))
	var resid mat.VecDense
	resid.MulVec(as, x.ColView(0))
	resid.SubVec(&resid, bs)
	if mat.Norm(&resid, math.Inf(1)) > 1e-9 {
		return nil, false
	}
	mat.Col(nu, 0, &x)
	return nu, true
}

// curveOf returns F̂ + Zν.
func curveOf(p *problem, f, nu []float64) []float64 {
	g := slices.Clone(f)
	p.addZ(g, nu)
	return g
}

func smallMechanisms(t *testing.T, n int) []mechanism.Mechanism {
	var ms []mechanism.Mechanism
	for _, p := range []mechanism.Params{
		{Name: "tree", Bins: n, Epsilon: 1},
		{Name: "kary", Bins: n, Epsilon: 1, K: 3},
		{Name: "cascade", Bins: n, Epsilon: 1, Delta: 1e-6},
	} {
		m, err := mechanism.New(p)
		check(t, err)
		ms = append(ms, m)
	}
	return ms
}

func TestTreeL2MatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	active := 0
	for _, n := range []int{2, 4, 6, 8} {
		for _, m := range smallMechanisms(t, n) {
			for range 4 {
				f := noisyCurve(rng, n, 0.5)
				p, err := newProblem(f, m)
				check(t, err)
				want, nu := bruteTree(p)
				if want > 0 {
					active++
				}
				g, st, err := treeL2(f, m, treeOptions{Tolerance: 1e-12})
				check(t, err)
				if !st.Converged {
					t.Fatalf("%s n=%d: %+v", m.Name(), n, st)
				}
				requireFeasible(t, g)
				near(t, want, st.Objective, 1e-7*max(1, want), "%s n=%d: objective", m.Name(), n)
				nearSlice(t, curveOf(p, f, nu), g, 1e-5, "%s n=%d", m.Name(), n)
			}
		}
	}
	if active <= 30 {
		t.Errorf("%d cases with active constraints: too few", active)
	}
}

// certify checks the KKT conditions exactly at the active set of nu: the
// least-norm ν* meeting the active constraints with equality must have
// non-negative multipliers μ (ν* = A_Sᵀμ, A_S A_Sᵀ μ = b_S) and satisfy
// every other constraint; ν* is then the unique optimum, found without
// trusting the iterative solver beyond its choice of active set.
func certify(t *testing.T, p *problem, nu []float64) []float64 {
	t.Helper()
	s := make([]float64, p.rows)
	p.slack(s, nu)
	a := denseA(p)
	var rows []int
	for r, v := range s {
		if v <= 1e-7 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		t.Fatal("no active constraint: F̂ was already feasible")
	}
	as := mat.NewDense(len(rows), p.cols, nil)
	bs := mat.NewVecDense(len(rows), nil)
	for i, r := range rows {
		as.SetRow(i, a.RawRowView(r))
		bs.SetVec(i, p.b[r])
	}
	var gram mat.SymDense
	gram.SymOuterK(1, as)
	var chol mat.Cholesky
	if !chol.Factorize(&gram) {
		t.Fatal("active constraint rows are linearly dependent")
	}
	var mu, star mat.VecDense
	check(t, chol.SolveVecTo(&mu, bs))
	if mat.Min(&mu) < -1e-9*max(1, mat.Norm(&mu, math.Inf(1))) {
		t.Fatalf("negative multiplier %g: not optimal", mat.Min(&mu))
	}
	star.MulVec(as.T(), &mu)
	nuStar := make([]float64, p.cols)
	mat.Col(nuStar, 0, &star)
	if v := p.violation(nuStar); v > 1e-9 {
		t.Fatalf("active-set solution infeasible by %g: not optimal", v)
	}
	return nuStar
}

// For N beyond brute force, the solution must pass an exact KKT check.
func TestTreeL2PassesKKTCertificate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{16, 32} {
		for _, m := range smallMechanisms(t, n) {
			for _, sd := range []float64{0.05, 0.2, 0.5} {
				f := noisyCurve(rng, n, sd)
				if slices.IsSorted(f) {
					f[n/2], f[n/2+1] = 0.6, 0.4 // force an active constraint
				}
				p, err := newProblem(f, m)
				check(t, err)
				g, st, err := treeL2(f, m, treeOptions{Tolerance: 1e-12})
				check(t, err)
				if !st.Converged {
					t.Fatalf("%s n=%d: %+v", m.Name(), n, st)
				}
				nu, _ := p.solve(treeOptions{Tolerance: 1e-12, MaxIterations: 100000}, p.violation(make([]float64, p.cols)))
				star := certify(t, p, nu)
				nearSlice(t, curveOf(p, f, star), g, 1e-5, "%s n=%d sd=%g", m.Name(), n, sd)
				near(t, floats.Dot(star, star)/2, st.Objective, 1e-8*max(1, st.Objective), "%s n=%d sd=%g: objective", m.Name(), n, sd)
			}
		}
	}
}

func TestTreeL2KeepsFeasibleCurve(t *testing.T) {
	m := smallMechanisms(t, 16)[0]
	f := make([]float64, 16)
	for i := range f {
		f[i] = float64(i) / 16
	}
	g, st, err := treeL2(f, m, treeOptions{})
	check(t, err)
	if !slices.Equal(f, g) || st.Iterations != 0 {
		t.Errorf("feasible curve %v became %v after %d iterations", f, g, st.Iterations)
	}
}

func poissonHist(t testing.TB, lambda float64, n int, seed uint64) []int64 {
	h, err := synthetic.PoissonHistogram(lambda, n, seed)
	check(t, err)
	return h
}

// The pointwise p = 2 smoothing is a Euclidean projection onto a convex set
// that contains the true ECDF, so it can never increase the L2 error — for
// any mechanism and any release.
func TestPointwiseL2NeverIncreasesError(t *testing.T) {
	const n = 1 << 10
	hist := poissonHist(t, 3, n, 7)
	truth := ecdf.ECDF(hist)
	for _, name := range []string{"tree", "kary", "cascade"} {
		for _, eps := range []float64{0.01, 0.1, 1, 10} {
			m, err := mechanism.New(mechanism.Params{Name: name, Bins: n, Epsilon: eps, Delta: 1e-9})
			check(t, err)
			for r := range 25 {
				p, err := ecdf.NewPrivate(m, hist, noise.Seed{byte(r), byte(eps * 100), name[0]})
				check(t, err)
				raw := p.Curve()
				if after, before := sqDist(truth, PointwiseL2(raw)), sqDist(truth, raw); after > before*(1+1e-12) {
					t.Errorf("%s ε=%g release %d: squared error %g after smoothing, %g before", name, eps, r, after, before)
				}
			}
		}
	}
}

// The tree form is the projection onto the same convex set in the metric
// Σ⁻¹ of the noise covariance Σ ∝ ZZᵀ, so it is non-expansive in that
// metric: ‖F − F́‖_Σ⁻¹ ≤ ‖F − F̂‖_Σ⁻¹ for every release, since F lies in
// the set. (It is not non-expansive in the Euclidean norm.)
func TestTreeL2NeverIncreasesErrorInNoiseMetric(t *testing.T) {
	const n = 64
	hist := poissonHist(t, 3, n, 17)
	truth := ecdf.ECDF(hist)
	for _, name := range []string{"tree", "kary", "cascade"} {
		for _, eps := range []float64{0.1, 1, 10} {
			m, err := mechanism.New(mechanism.Params{Name: name, Bins: n, Epsilon: eps, Delta: 1e-9})
			check(t, err)
			var chol mat.Cholesky
			for r := range 20 {
				rel, err := ecdf.NewPrivate(m, hist, noise.Seed{byte(r), byte(eps * 10), name[0], 1})
				check(t, err)
				raw := rel.Curve()
				if r == 0 {
					p, err := newProblem(raw, m)
					check(t, err)
					if !chol.Factorize(covariance(p)) {
						t.Fatalf("%s: ZZᵀ not positive definite", name)
					}
				}
				g, st, err := treeL2(raw, m, treeOptions{Tolerance: 1e-12})
				check(t, err)
				if !st.Converged {
					t.Fatalf("%s ε=%g release %d: %+v", name, eps, r, st)
				}
				before, after := mahalanobis(t, &chol, truth, raw), mahalanobis(t, &chol, truth, g)
				if after > before*(1+1e-6) {
					t.Errorf("%s ε=%g release %d: error %g in the noise metric after smoothing, %g before", name, eps, r, after, before)
				}
			}
		}
	}
}

// covariance returns ZZᵀ, the noise covariance up to the node variance.
func covariance(p *problem) *mat.SymDense {
	var zzt mat.SymDense
	zzt.SymOuterK(1, denseZ(p))
	return &zzt
}

// denseZ returns the prefix–node pattern Z.
func denseZ(p *problem) *mat.Dense {
	n := len(p.zPtr) - 1
	z := mat.NewDense(n, p.cols, nil)
	for i := range n {
		for k := p.zPtr[i]; k < p.zPtr[i+1]; k++ {
			z.Set(i, p.zIdx[k], p.zVal[k])
		}
	}
	return z
}

// mahalanobis returns (a − b)ᵀ Σ⁻¹ (a − b) with Σ given by its Cholesky factor.
func mahalanobis(t *testing.T, chol *mat.Cholesky, a, b []float64) float64 {
	d := mat.NewVecDense(len(a), nil)
	for i := range a {
		d.SetVec(i, a[i]-b[i])
	}
	var x mat.VecDense
	check(t, chol.SolveVecTo(&x, d))
	return mat.Dot(d, &x)
}

func TestTreeL2OnTreeRelease(t *testing.T) {
	const n = 1 << 10
	hist := poissonHist(t, 3, n, 9)
	m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: n, Epsilon: 0.5})
	check(t, err)
	p, err := ecdf.NewPrivate(m, hist, noise.Seed{1})
	check(t, err)
	g, st, err := treeL2(p.Curve(), m, treeOptions{Tolerance: 1e-9})
	check(t, err)
	if !st.Converged {
		t.Fatalf("%+v", st)
	}
	requireFeasible(t, g)
}

func TestApply(t *testing.T) {
	m := smallMechanisms(t, 4)[0]
	f := []float64{0.3, 0.2, 0.9, 1.2}
	for _, method := range Methods {
		t.Run(method, func(t *testing.T) {
			g, err := Apply(method, f, m)
			check(t, err)
			if len(g) != 4 {
				t.Fatalf("%d points, want 4", len(g))
			}
			if method != "none" {
				requireFeasible(t, g)
			}
			if !slices.Equal(f, []float64{0.3, 0.2, 0.9, 1.2}) {
				t.Errorf("input modified: %v", f)
			}
		})
	}
}

// TestApplyRejectsBadInput checks that each error names what is wrong
// (the wording shown to users).
func TestApplyRejectsBadInput(t *testing.T) {
	m := smallMechanisms(t, 4)[0]
	f := []float64{0.3, 0.2, 0.9, 1.2}
	apply := func(method string, f []float64, m mechanism.Mechanism) func() error {
		return func() error { _, err := Apply(method, f, m); return err }
	}
	tree := func(f []float64, m mechanism.Mechanism, opt treeOptions) func() error {
		return func() error { _, _, err := treeL2(f, m, opt); return err }
	}
	tests := []struct {
		name string
		run  func() error
		want []string
	}{
		{"unknown method", apply("l3", f, m), []string{`"l3"`, "none, l1, l2, tree-l2"}},
		{"no mechanism", apply("tree-l2", f, nil), []string{"mechanism"}},
		{"empty", apply("l2", nil, m), []string{"empty"}},
		{"NaN", apply("l1", []float64{0, math.NaN()}, m), []string{"point 2"}},
		{"infinity", apply("tree-l2", []float64{0, 0.1, math.Inf(1), 1}, m), []string{"point 3"}},
		{"length", tree(f[:3], m, treeOptions{}), []string{"3 points"}},
		{"tolerance", tree(f, m, treeOptions{Tolerance: -1}), []string{"tolerance"}},
		{"node out of range", tree(f, outOfRangeNode{m}, treeOptions{}), []string{"prefix 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one containing %q", err, want)
				}
			}
		})
	}
}

// outOfRangeNode is a broken mechanism whose prefixes use node Nodes().
type outOfRangeNode struct{ mechanism.Mechanism }

func (o outOfRangeNode) Terms(i int, dst []mechanism.Term) []mechanism.Term {
	return append(dst, mechanism.Term{Node: o.Nodes(), Coef: 1})
}

// ApplyTop fixes the last point at 1 (F at the grid's top, public under
// replace-one): l2 is the constrained optimum, l1 and tree-l2 end at 1
// and stay feasible, none is the raw curve.
func TestApplyTopEndsAtOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := 1 + trial%12
		f := noisyCurve(rng, n, 0.3)
		g, err := ApplyTop("l2", f, nil)
		if err != nil {
			t.Fatal(err)
		}
		requireFeasible(t, g)
		if g[n-1] != 1 {
			t.Fatalf("l2 of %v ends at %g, want 1", f, g[n-1])
		}
		near(t, bruteL2Top(f), sqDist(f, g), 1e-12, "constrained L2 distance of f=%v g=%v", f, g)
		g1, err := ApplyTop("l1", f, nil)
		if err != nil {
			t.Fatal(err)
		}
		requireFeasible(t, g1)
		if g1[n-1] != 1 {
			t.Fatalf("l1 of %v ends at %g, want 1", f, g1[n-1])
		}
	}
	// A curve whose noisy end falls below its middle: plain l2 pools the
	// end below 1; ApplyTop does not.
	f := []float64{0.2, 0.5, 0.95, 0.97, 0.9}
	if g, _ := Apply("l2", f, nil); g[4] == 1 {
		t.Fatalf("Apply l2 of %v already ends at 1: the case tests nothing", f)
	}
	if g, _ := ApplyTop("l2", f, nil); !slices.Equal(g, []float64{0.2, 0.5, 0.95, 0.97, 1}) {
		t.Errorf("ApplyTop l2 of %v = %v", f, g)
	}
	m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: len(f), Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := ApplyTop("tree-l2", f, m)
	if err != nil {
		t.Fatal(err)
	}
	requireFeasible(t, g)
	if g[len(g)-1] != 1 {
		t.Errorf("tree-l2 of %v ends at %g", f, g[len(g)-1])
	}
	if g, _ := ApplyTop("none", f, nil); !slices.Equal(g, f) {
		t.Errorf("none changed %v to %v", f, g)
	}
}
