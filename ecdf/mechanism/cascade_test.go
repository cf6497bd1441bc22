package mechanism

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func mustCascade(t testing.TB, p Params) *cascade {
	t.Helper()
	c, err := newCascade(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// algorithm1 returns, for the tree of height L, the coefficient vector
// of every node (heap order 1…2^{L+1}−1) on the independent unit
// variables (X_∅, Y_1, …, Y_{2^L−1}), built as Algorithm 1 does:
// X_{v0} = X_v/2 + (√3/2)Y_v, X_{v1} = X_v/2 − (√3/2)Y_v.
func algorithm1(L int) [][]float64 {
	n := 1 << L
	nodes := make([][]float64, 2*n)
	nodes[1] = make([]float64, n)
	nodes[1][0] = 1
	for v := 1; v < n; v++ {
		left, right := make([]float64, n), make([]float64, n)
		for j, x := range nodes[v] {
			left[j], right[j] = x/2, x/2
		}
		left[v] += math.Sqrt(3) / 2
		right[v] -= math.Sqrt(3) / 2
		nodes[2*v], nodes[2*v+1] = left, right
	}
	return nodes
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// lcaHeight returns the height of the lowest common ancestor of leaves
// a, b (1-based) in a tree of height L.
func lcaHeight(a, b int) int {
	h := 0
	for a, b = a-1, b-1; a != b; a, b = a>>1, b>>1 {
		h++
	}
	return h
}

// TestCascadeCovariance checks Theorem 3.3 and Definition 3.1 on the
// construction of Algorithm 1, and that the mechanism's Terms give the
// same leaves.
func TestCascadeCovariance(t *testing.T) {
	for L := 1; L <= 6; L++ {
		nodes := algorithm1(L)
		for v := 1; v < len(nodes); v++ {
			if got := dot(nodes[v], nodes[v]); math.Abs(got-1) > 1e-12 {
				t.Fatalf("L=%d node %d: variance %v σ², want σ²", L, v, got)
			}
			if v > 1 && v%2 == 0 {
				if got := dot(nodes[v], nodes[v+1]); math.Abs(got+0.5) > 1e-12 {
					t.Fatalf("L=%d siblings %d, %d: covariance %v σ², want −σ²/2", L, v, v+1, got)
				}
			}
		}
		n := 1 << L
		c := mustCascade(t, Params{Bins: n, Epsilon: 1, Delta: 1e-6})
		leaf := func(a int) []float64 { // Terms(a) − Terms(a−1), in Y units
			x := make([]float64, n)
			for _, term := range c.Terms(a, nil) {
				x[term.Node] += term.Coef
			}
			if a > 1 {
				for _, term := range c.Terms(a-1, nil) {
					x[term.Node] -= term.Coef
				}
			}
			return x
		}
		for a := 1; a <= n; a++ {
			want, got := nodes[n+a-1], leaf(a)
			for j := range want {
				if math.Abs(want[j]-got[j]) > 1e-9 {
					t.Fatalf("L=%d leaf %d: Terms give %v, Algorithm 1 %v", L, a, got, want)
				}
			}
			for b := a + 1; b <= n; b++ {
				h := lcaHeight(a, b)
				if got, want := dot(nodes[n+a-1], nodes[n+b-1]), -math.Ldexp(1, -(2*h-1)); math.Abs(got-want) > 1e-12 {
					t.Fatalf("L=%d leaves %d, %d (LCA height %d): covariance %v, want %v", L, a, b, h, got, want)
				}
			}
		}
	}
}

// inverse returns the inverse of a small symmetric positive definite
// matrix by Gauss–Jordan elimination.
func inverse(a [][]float64) [][]float64 {
	n := len(a)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(append([]float64{}, a[i]...), make([]float64, n)...)
		m[i][n+i] = 1
	}
	for col := range n {
		p := m[col][col]
		for j := range m[col] {
			m[col][j] /= p
		}
		for r := range n {
			if r != col {
				f := m[r][col]
				for j := range m[r] {
					m[r][j] -= f * m[col][j]
				}
			}
		}
	}
	for i := range m {
		m[i] = m[i][n:]
	}
	return m
}

// TestCascadeMahalanobisByEnumeration computes C from Algorithm 1,
// inverts it, and checks ΔᵀC⁻¹Δ for every add/remove change (1 + L/3) and
// every replace-one move ((2h+2)/3 at LCA height h, largest 2(L+1)/3).
func TestCascadeMahalanobisByEnumeration(t *testing.T) {
	for L := 1; L <= 5; L++ {
		nodes := algorithm1(L)
		n := 1 << L
		cov := make([][]float64, n)
		for a := range cov {
			cov[a] = make([]float64, n)
			for b := range cov[a] {
				cov[a][b] = dot(nodes[n+a], nodes[n+b])
			}
		}
		prec := inverse(cov)
		worst := 0.0
		for a := range n {
			if got, want := prec[a][a], cascadeMahalanobisFloat(L, AddRemove); math.Abs(got-want) > 1e-8 {
				t.Fatalf("L=%d add to bin %d: ΔᵀC⁻¹Δ = %v, want %v", L, a+1, got, want)
			}
			for b := a + 1; b < n; b++ {
				q := prec[a][a] + prec[b][b] - 2*prec[a][b]
				if want := float64(2*lcaHeight(a+1, b+1)+2) / 3; math.Abs(q-want) > 1e-8 {
					t.Fatalf("L=%d move %d→%d: ΔᵀC⁻¹Δ = %v, want %v", L, a+1, b+1, q, want)
				}
				worst = max(worst, q)
			}
		}
		if want := cascadeMahalanobisFloat(L, ReplaceOne); math.Abs(worst-want) > 1e-8 {
			t.Errorf("L=%d: worst replace-one ΔᵀC⁻¹Δ = %v, CascadeMahalanobis %v", L, worst, want)
		}
	}
}

// TestCascadeReleaseFollowsAlgorithm1 rebuilds every node top-down from
// the release's variables (X_{v0} = X_v/2 + D_v/2 = X_v/2 + (√3/2)Y_v) and
// checks children sum to their parent, prefixes are sums of leaves, and
// PrefixNoise rounds them.
func TestCascadeReleaseFollowsAlgorithm1(t *testing.T) {
	for _, bins := range []int{1, 2, 20, 32} {
		c := mustCascade(t, Params{Bins: bins, Epsilon: 1, Delta: 1e-6})
		rel := c.NewRelease(karySeed(bins)).(*cascadeRelease)
		n := 1 << c.levels
		x := make([]float64, 2*n)
		x[1] = float64(rel.vars[0])
		for v := 1; v < n; v++ {
			d := float64(rel.vars[v])
			x[2*v], x[2*v+1] = x[v]/2+d/2, x[v]/2-d/2
			if x[2*v]+x[2*v+1] != x[v] {
				t.Fatalf("N=%d node %d: children sum %v, parent %v", bins, v, x[2*v]+x[2*v+1], x[v])
			}
		}
		var sum float64
		for i := 1; i <= bins; i++ {
			sum += x[n+i-1]
			exact := math.Ldexp(rel.scaledPrefix(i).toFloat(t), -c.levels)
			if exact != sum {
				t.Fatalf("N=%d prefix %d: S = %v, Σ leaves = %v", bins, i, exact, sum)
			}
			if got, want := rel.PrefixNoise(i), int64(math.RoundToEven(sum)); got != want {
				t.Fatalf("N=%d prefix %d: noise %d, want round(%v) = %d", bins, i, got, sum, want)
			}
		}
	}
}

// toFloat returns x as a float64; x must fit an int64.
func (x int128) toFloat(t testing.TB) float64 {
	t.Helper()
	if int64(x.hi) != int64(x.lo)>>63 {
		t.Fatalf("int128 %x:%x does not fit an int64", x.hi, x.lo)
	}
	return float64(int64(x.lo))
}

// TestRoundDyadic checks the 128-bit sum c1·v1 + c2·v2 and its rounding
// x/2^L, ties to even, with sums beyond 2^64 in both signs.
func TestRoundDyadic(t *testing.T) {
	for _, c := range []struct {
		c1   uint64
		v1   int64
		c2   uint64
		v2   int64
		L    int
		want int64
	}{
		{1, 5, 0, 0, 0, 5}, {1, 1, 0, 0, 1, 0}, {1, 3, 0, 0, 1, 2}, {1, -1, 0, 0, 1, 0}, {1, -3, 0, 0, 1, -2},
		{1, 5, 0, 0, 2, 1}, {1, 6, 0, 0, 2, 2}, {1, 7, 0, 0, 2, 2}, {1, -5, 0, 0, 2, -1}, {1, -6, 0, 0, 2, -2},
		{1, -7, 0, 0, 2, -2}, {1, 10, 0, 0, 2, 2}, {1, -10, 0, 0, 2, -2}, {1, 1 << 40, 0, 0, 20, 1 << 20},
		{1 << 40, 1 << 40, 1, 3 << 19, 20, 1<<60 + 2},            // 2^80 + 1.5·2^20: tie, to even
		{1 << 40, -(1 << 40), 1, -(5 << 18), 20, -(1 << 60) - 1}, // −2^80 − 1.25·2^20
		{1 << 35, 1 << 35, 1, 1 << 29, 30, 1 << 40},              // 2^70 + 2^29: tie, to even
		{1 << 35, -(1 << 35), 1, -(3 << 29), 30, -(1 << 40) - 2}, // −2^70 − 1.5·2^30: tie, to even
		{1 << 30, -(1 << 62), 1 << 30, 1 << 62, 30, 0},           // cancels beyond 2^64
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			var x int128
			x.addMul(c.c1, c.v1)
			x.addMul(c.c2, c.v2)
			if got := x.roundDyadic(c.L); got != c.want {
				t.Errorf("round((%d·%d + %d·%d)/2^%d) = %d, want %d", c.c1, c.v1, c.c2, c.v2, c.L, got, c.want)
			}
		})
	}
}

// TestCascadeMonteCarlo compares, over independent seeds, the sample
// variance of PrefixNoise with PrefixVariance (Gaussian fourth moment:
// s.e. V·√(2/R)), and the rounding error e = round(S) − S with the
// uniform lattice law (mean of e² within 5 s.e., e uncorrelated with S).
func TestCascadeMonteCarlo(t *testing.T) {
	const runs = 3000
	c := mustCascade(t, Params{Bins: 16, Epsilon: 2, Delta: 1e-3})
	prefixes := []int{1, 5, 8, 12, 16}
	var sq, e2, eS [5]float64
	for r := range runs {
		rel := c.NewRelease(karySeed(r)).(*cascadeRelease)
		for j, i := range prefixes {
			s := math.Ldexp(rel.scaledPrefix(i).toFloat(t), -c.levels)
			x := float64(rel.PrefixNoise(i))
			sq[j] += x * x
			e2[j] += (x - s) * (x - s)
			eS[j] += (x - s) * s
		}
	}
	for j, i := range prefixes {
		want := c.PrefixVariance(i)
		if se := want * math.Sqrt(2.0/runs); math.Abs(sq[j]/runs-want) > 5*se {
			t.Errorf("prefix %d: Monte-Carlo variance %.2f, exact %.2f (s.e. %.2f)", i, sq[j]/runs, want, se)
		}
		m := c.levels - min(trailingZeros(i), c.levels)
		mu2, mu4 := latticeMoments(m)
		if math.Abs(mu2-roundingVariance(m)) > 1e-15 {
			t.Errorf("m=%d: roundingVariance %v, lattice second moment %v", m, roundingVariance(m), mu2)
		}
		if se := math.Sqrt((mu4 - mu2*mu2) / runs); math.Abs(e2[j]/runs-mu2) > 5*se+1e-12 {
			t.Errorf("prefix %d: mean rounding error² %.4f, want %.4f (s.e. %.4f)", i, e2[j]/runs, mu2, se)
		}
		if se := math.Sqrt(mu2 * want / runs); math.Abs(eS[j]/runs) > 5*se+1e-12 {
			t.Errorf("prefix %d: Cov(e, S) ≈ %.4f, want 0 (s.e. %.4f)", i, eS[j]/runs, se)
		}
	}
}

func trailingZeros(i int) int {
	z := 0
	for ; i%2 == 0; i /= 2 {
		z++
	}
	return z
}

// latticeMoments returns E[e²], E[e⁴] for e uniform on the 2^m points
// j/2^m, −2^{m−1} < j ≤ 2^{m−1} (e = 0 when m = 0).
func latticeMoments(m int) (mu2, mu4 float64) {
	if m == 0 {
		return 0, 0
	}
	n := 1 << m
	for j := -n/2 + 1; j <= n/2; j++ {
		e := float64(j) / float64(n)
		mu2 += e * e / float64(n)
		mu4 += e * e * e * e / float64(n)
	}
	return mu2, mu4
}

func TestCascadeSigma(t *testing.T) {
	for _, L := range []int{3, 10, 15} {
		for _, eps := range []float64{0.1, 0.5, 1} {
			for _, delta := range []float64{1e-6, 1e-9} {
				for _, r := range []Relation{ReplaceOne, AddRemove} {
					c := mustCascade(t, Params{Bins: 1 << L, Epsilon: eps, Delta: delta, Relation: r})
					rho, _ := zcdpRho(eps, delta)
					if want := c.Mahalanobis() / (2 * rho); math.Abs(c.Sigma2()-want) > 1e-12*want {
						t.Errorf("L=%d ε=%v δ=%v %v: σ² %v, want M/(2ρ) = %v", L, eps, delta, r, c.Sigma2(), want)
					}
					if thm := cascadeTheorem38Sigma2(c.Mahalanobis(), eps, delta); c.Sigma2() > thm {
						t.Errorf("L=%d ε=%v δ=%v: σ² %v above Theorem 3.8's %v", L, eps, delta, c.Sigma2(), thm)
					}
				}
			}
		}
	}
}

func TestCascadeMeanVariance(t *testing.T) {
	c := mustCascade(t, Params{Bins: 100, Epsilon: 1, Delta: 1e-6})
	var sum float64
	for i := 1; i <= 100; i++ {
		var v float64
		for _, term := range c.Terms(i, nil) {
			v += term.Coef * term.Coef * c.NodeVariance()
		}
		m := c.levels - min(trailingZeros(i), c.levels)
		if got := c.PrefixVariance(i); math.Abs(got-v-roundingVariance(m)) > 1e-9*got {
			t.Fatalf("prefix %d: variance %v, Σ coef²·NodeVariance + rounding = %v", i, got, v+roundingVariance(m))
		}
		sum += c.PrefixVariance(i)
	}
	if math.Abs(sum/100-c.MeanVariance()) > 1e-9*sum {
		t.Errorf("MeanVariance %v, mean %v", c.MeanVariance(), sum/100)
	}
}

func TestCascadeRejectsBadParams(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Bins: 8, Epsilon: 1}, "delta 0"},
		{Params{Bins: 0, Epsilon: 1, Delta: 1e-6}, "bins 0"},
		{Params{Bins: 1 << 31, Epsilon: 1, Delta: 1e-6}, "bins 2147483648"},
		{Params{Bins: 8, Epsilon: math.Inf(1), Delta: 1e-6}, "epsilon +Inf"},
		{Params{Bins: 8, Epsilon: 1e-6, Delta: 1e-12, Unit: 1 << 32}, "epsilon 1e-06"},
		{Params{Bins: 8, Epsilon: 1, Delta: 1e-6, Relation: Relation(3)}, "Relation(3)"},
	} {
		t.Run(c.want, func(t *testing.T) {
			if _, err := newCascade(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewCascade(%+v) error = %v, want one naming %q", c.p, err, c.want)
			}
		})
	}
}
