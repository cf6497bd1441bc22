package mechanism

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// Compile-time check that *tree is a Mechanism.
var _ Mechanism = (*tree)(nil)

func mustTree(t testing.TB, bins int, epsilon float64, r Relation) *tree {
	t.Helper()
	m, err := newTree(Params{Name: "tree", Bins: bins, Epsilon: epsilon, Relation: r})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewTreeRejectsBadParams(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Bins: 0, Epsilon: 1}, "bins 0"},
		{Params{Bins: -3, Epsilon: 1}, "bins -3"},
		{Params{Bins: 1 << 49, Epsilon: 1}, "bins 562949953421312"},
		{Params{Bins: 8, Epsilon: 0}, "epsilon 0"},
		{Params{Bins: 8, Epsilon: -1}, "epsilon -1"},
		{Params{Bins: 8, Epsilon: nan()}, "epsilon NaN"},
		{Params{Bins: 8, Epsilon: inf()}, "epsilon +Inf"},
		{Params{Bins: 8, Epsilon: 1, Delta: 1}, "delta 1"},
		{Params{Bins: 8, Epsilon: 1, Delta: -0.5}, "delta -0.5"},
		{Params{Bins: 8, Epsilon: 1, Relation: Relation(7)}, "Relation(7)"},
		{Params{Bins: 8, Epsilon: 1e-300}, "epsilon 1e-300"},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, err := newTree(c.p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("newTree(%+v) error = %v, want one naming %q", c.p, err, c.want)
			}
		})
	}
}

func TestTreeShape(t *testing.T) {
	for _, c := range []struct {
		bins, levels, nodes int
		relation            Relation
		delta               int
	}{
		{1, 0, 1, ReplaceOne, 1},
		{1, 0, 1, AddRemove, 1},
		{2, 1, 3, ReplaceOne, 1},
		{2, 1, 3, AddRemove, 1},
		{5, 3, 5 + 3 + 2 + 1, ReplaceOne, 3},
		{5, 3, 5 + 3 + 2 + 1, AddRemove, 2},
		{256, 8, 511, ReplaceOne, 8},
		{256, 8, 511, AddRemove, 5},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			m := mustTree(t, c.bins, 1, c.relation)
			if m.Levels() != c.levels || m.Nodes() != c.nodes || m.Sensitivity() != c.delta {
				t.Errorf("N=%d %v: L=%d nodes=%d Δ=%d, want %d %d %d", c.bins, c.relation,
					m.Levels(), m.Nodes(), m.Sensitivity(), c.levels, c.nodes, c.delta)
			}
		})
	}
}

func TestTreeReleaseIsConsistent(t *testing.T) {
	m := mustTree(t, 1000, 0.5, ReplaceOne)
	a, b := m.NewRelease([32]byte{1}), m.NewRelease([32]byte{1})
	other := m.NewRelease([32]byte{2})
	differ := 0
	for i := 1000; i >= 1; i-- {
		x := a.PrefixNoise(i)
		if a.PrefixNoise(i) != x || b.PrefixNoise(i) != x {
			t.Fatalf("prefix %d: noise not reproducible", i)
		}
		if other.PrefixNoise(i) != x {
			differ++
		}
	}
	// Two independent prefix noises of variance ≈ 2·10·20² agree with
	// probability well below 1%.
	if differ < 900 {
		t.Errorf("seeds 1 and 2 gave equal noise at %d of 1000 prefixes", 1000-differ)
	}
}

func nan() float64 { return math.NaN() }
func inf() float64 { return math.Inf(1) }

// nodeShift is a shift χ of node noises, keyed by node index.
type nodeShift map[int]int

// dyadicShifts builds node shifts χ from dyadic intervals of prefix
// indices, as in the proof of dp-ecdf Thm 3.1. A node is addressed by
// the interval [s+1, s+2^k] it covers (s a multiple of 2^k) and mapped
// to the mechanism's node through Terms(s+1): the level-k term of prefix
// s+1. If Terms used another index pattern than (⌈i/2^l⌉, l), the node
// found would not cover exactly that interval and Z·χ would not match.
type dyadicShifts struct {
	m     *tree
	terms [][]Term // terms[i] = Terms(i), 1 ≤ i ≤ N
}

func newDyadicShifts(m *tree) *dyadicShifts {
	d := &dyadicShifts{m: m, terms: make([][]Term, m.Bins()+1)}
	for i := 1; i <= m.Bins(); i++ {
		d.terms[i] = m.Terms(i, nil)
	}
	return d
}

// add adds coef to the node covering [s+1, s+2^k]; a node covering only
// prefixes beyond N is never released and is left out.
func (d *dyadicShifts) add(chi nodeShift, s, k, coef int) {
	if s+1 > d.m.Bins() {
		return
	}
	chi[d.terms[s+1][k].Node] += coef
}

// nonAdjacentForm returns the digits d_k ∈ {−1, 0, 1}, k = 0, 1, …, of
// m = Σ d_k 2^k with no two adjacent digits non-zero: it has at most
// ⌈(b+1)/2⌉ non-zero digits for m < 2^b.
func nonAdjacentForm(m int) []int {
	var digits []int
	for m > 0 {
		d := 0
		if m%2 == 1 {
			d = 2 - m%4
		}
		digits = append(digits, d)
		m = (m - d) / 2
	}
	return digits
}

// addPrefix adds χ with Z·χ = 1_{[d+1, d+length]} (Lemma 1, χ⁻): walk
// the non-adjacent form of length from its top digit, adding the node
// [p+1, p+2^k] for a digit +1 and subtracting [p−2^k+1, p] for −1.
func (d *dyadicShifts) addPrefix(chi nodeShift, start, length int) {
	digits := nonAdjacentForm(length)
	p := start
	for k := len(digits) - 1; k >= 0; k-- {
		switch digits[k] {
		case 1:
			d.add(chi, p, k, 1)
			p += 1 << k
		case -1:
			p -= 1 << k
			d.add(chi, p, k, -1)
		}
	}
}

// addSuffix adds χ with Z·χ = 1_{[end−length+1, end]} (Lemma 1, χ⁺): the
// mirror image of addPrefix, walking down from end.
func (d *dyadicShifts) addSuffix(chi nodeShift, end, length int) {
	digits := nonAdjacentForm(length)
	p := end
	for k := len(digits) - 1; k >= 0; k-- {
		switch digits[k] {
		case 1:
			p -= 1 << k
			d.add(chi, p, k, 1)
		case -1:
			d.add(chi, p, k, -1)
			p += 1 << k
		}
	}
}

// interval returns χ with Z·χ = 1_{[t1+1, t2]} as in the proof of Thm
// 3.1 (Eq. 9): split at d2 = j_m·2^{l_m}, the multiple of the largest
// power of two in [t1, t2), into a suffix of the block [d2−2^{l_m}+1, d2]
// and a prefix of the block [d2+1, d2+2^{l_m}].
func (d *dyadicShifts) interval(t1, t2 int) nodeShift {
	chi := nodeShift{}
	if t1 == t2 {
		return chi
	}
	lm := d.m.Levels()
	for ; lm > 0; lm-- {
		if d2 := (t1 + 1<<lm - 1) >> lm << lm; d2 < t2 { // smallest multiple of 2^lm ≥ t1
			break
		}
	}
	d2 := (t1 + 1<<lm - 1) >> lm << lm
	d.addSuffix(chi, d2, d2-t1)
	d.addPrefix(chi, d2, t2-d2)
	return chi
}

// l1 returns ‖χ‖₁.
func (chi nodeShift) l1() int {
	n := 0
	for _, c := range chi {
		n += max(c, -c)
	}
	return n
}

// checkExplains reports whether Z·χ equals the prefix change want
// (want[i], 1 ≤ i ≤ N), Z the 0/1 prefix-node incidence of Terms.
func (d *dyadicShifts) explains(chi nodeShift, want func(i int) int) bool {
	for i := 1; i <= d.m.Bins(); i++ {
		got := 0
		for _, term := range d.terms[i] {
			got += chi[term.Node] * int(term.Coef)
		}
		if got != want(i) {
			return false
		}
	}
	return true
}

// cutCosts returns cost[l][j][p] (j 0-based), the least number of cut
// edges in the subtree of node (j+1, l) of the perfect tree of height L,
// plus the edge above it, over the labellings g ∈ {0, 1} with
// g(leaf i) = change(i) for i ≤ N (free beyond N) when the node's parent
// is labelled p. cost[L][0][0] is the minimum cut of the proof of Δ = L
// (see tree).
func cutCosts(L, bins int, change func(i int) int) [][][2]int {
	cost := make([][][2]int, L+1)
	for l := 0; l <= L; l++ {
		cost[l] = make([][2]int, 1<<(L-l))
		for j := range cost[l] {
			for p := range 2 {
				if l == 0 {
					if j < bins {
						cost[0][j][p] = b2i(change(j+1) != p)
					}
					continue
				}
				cost[l][j][p] = min(b2i(p != 0)+cost[l-1][2*j][0]+cost[l-1][2*j+1][0],
					b2i(p != 1)+cost[l-1][2*j][1]+cost[l-1][2*j+1][1])
			}
		}
	}
	return cost
}

// minCut returns the node shift χ of least ‖χ‖₁ with Z·χ = change for
// a 0/1 change of the prefixes, built as in the proof of Δ = L: the
// labelling g of least cut (cutCosts), read from the root down, and
// χ_v = g(v) − g(parent v) on the nodes the mechanism has (those
// covering a prefix ≤ N).
func (d *dyadicShifts) minCut(change func(i int) int) nodeShift {
	L, bins := d.m.Levels(), d.m.Bins()
	cost := cutCosts(L, bins, change)
	chi := nodeShift{}
	var label func(l, j, parent int)
	label = func(l, j, parent int) {
		g := parent
		switch {
		case l == 0 && j < bins:
			g = change(j + 1)
		case l > 0 && b2i(parent != 0)+cost[l-1][2*j][0]+cost[l-1][2*j+1][0] != cost[l][j][parent]:
			g = 1
		case l > 0:
			g = 0
		}
		if g != parent {
			d.add(chi, j<<l, l, g-parent)
		}
		if l > 0 {
			label(l-1, 2*j, g)
			label(l-1, 2*j+1, g)
		}
	}
	label(L, 0, 0)
	return chi
}

// TestTreePrivacyReplaceOne makes the privacy proof executable: for
// every move of one instance from bin a to bin b, it builds the node
// shift χ of the minimum cut (minCut) that explains the change of the
// prefix counts and checks Z·χ = the change and ‖χ‖₁ ≤ Δ = max(L, 1);
// and it checks that the construction of dp-ecdf Thm 3.1 (Eq. 9)
// explains it too, with ‖χ‖₁ ≤ L + 1, the paper's Δ.
// With η ~ Lap_Z(Δ/ε) every output is then at most e^{ε‖χ‖₁/Δ} ≤ e^ε
// times likelier under one data set than under the other.
func TestTreePrivacyReplaceOne(t *testing.T) {
	for _, bins := range []int{1, 2, 3, 5, 100, 128} {
		m := mustTree(t, bins, 1, ReplaceOne)
		d := newDyadicShifts(m)
		L, worst, worstPaper := m.Levels(), 0, 0
		for a := 1; a <= bins; a++ {
			for b := a + 1; b <= bins; b++ {
				// An instance moved from bin b to bin a adds 1 to the
				// prefixes a..b−1 (and from a to b subtracts it: −χ).
				change := func(i int) int { return b2i(a <= i && i < b) }
				chi, paper := d.minCut(change), d.interval(a-1, b-1)
				if !d.explains(chi, change) || !d.explains(paper, change) {
					t.Fatalf("N=%d: χ for the move %d→%d does not explain the prefix change", bins, b, a)
				}
				worst, worstPaper = max(worst, chi.l1()), max(worstPaper, paper.l1())
			}
		}
		if worst > m.Sensitivity() || m.Sensitivity() != max(L, 1) {
			t.Errorf("N=%d: a move needs ‖χ‖₁ = %d, Δ = %d, want ≤ Δ = max(L, 1) = %d", bins, worst, m.Sensitivity(), max(L, 1))
		}
		if worstPaper > L+1 {
			t.Errorf("N=%d: Thm 3.1's construction needs ‖χ‖₁ = %d > L + 1 = %d", bins, worstPaper, L+1)
		}
		t.Logf("N=%d, L=%d: largest ‖χ‖₁ over all moves %d (Thm 3.1's construction %d), Δ = %d", bins, L, worst, worstPaper, m.Sensitivity())
	}
}

// TestTreePrivacyAddRemove does the same for add/remove neighbours:
// adding an instance in bin a adds 1 to the prefixes a..N, explained by
// the suffix χ⁺ of Lemma 1 with ‖χ‖₁ ≤ ⌈(L+1)/2⌉ = Δ.
func TestTreePrivacyAddRemove(t *testing.T) {
	for _, bins := range []int{1, 2, 3, 200, 256} {
		m := mustTree(t, bins, 1, AddRemove)
		d := newDyadicShifts(m)
		worst := 0
		for a := 1; a <= bins; a++ {
			chi := nodeShift{}
			d.addSuffix(chi, 1<<m.Levels(), 1<<m.Levels()-a+1)
			if !d.explains(chi, func(i int) int { return b2i(i >= a) }) {
				t.Fatalf("N=%d: χ for adding an instance in bin %d does not explain the prefix change", bins, a)
			}
			worst = max(worst, chi.l1())
		}
		if worst > m.Sensitivity() {
			t.Errorf("N=%d: adding an instance needs ‖χ‖₁ = %d > Δ = %d", bins, worst, m.Sensitivity())
		}
		t.Logf("N=%d, L=%d: largest ‖χ‖₁ over all additions %d, Δ = %d", bins, m.Levels(), worst, m.Sensitivity())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// minShift returns the least ‖χ‖₁ of an integer node shift χ with
// Z·χ = change on the prefixes 1..N, by dynamic programming over the
// dyadic tree of prefixes: cost(v, s) is the least Σ|χ| inside the
// subtree of node v given the sum s of χ over v's ancestors, and a leaf
// i costs |change(i) − s| (0 beyond N). Ancestor sums are limited to
// [−3, 4], wider than the {0, 1} an optimal shift of a 0/1 change needs
// (clamping, see tree), so the test below checks that claim
// independently: a narrower window can only raise the minimum. The
// minimum over s2 of |s2 − s| + f(s2) is a distance transform, two
// passes over the window.
func minShift(levels, bins int, change func(i int) int) int {
	const lo, hi = -3, 4
	const w = hi - lo + 1
	cost := make([][w]int, 1<<levels) // the current level's nodes
	for j := range cost {
		for s := lo; s <= hi; s++ {
			if j < bins {
				cost[j][s-lo] = abs(change(j+1) - s)
			}
		}
	}
	for l := 1; l <= levels; l++ {
		for j := range cost[:len(cost)/2] {
			var f [w]int
			for k := range f {
				f[k] = cost[2*j][k] + cost[2*j+1][k]
			}
			for k := 1; k < w; k++ {
				f[k] = min(f[k], f[k-1]+1)
			}
			for k := w - 2; k >= 0; k-- {
				f[k] = min(f[k], f[k+1]+1)
			}
			cost[j] = f
		}
		cost = cost[:len(cost)/2]
	}
	return cost[0][0-lo]
}

func abs(x int) int { return max(x, -x) }

// TestTreeSensitivityIsTight computes, for every tree with N = 2^L ≤
// 2^8 and every replace-one move, the least ‖χ‖₁ that explains the
// change — the minimum cut of the proof of Δ = L (cutCosts), and for
// L ≤ 7 also the least over all integer shifts with ancestor sums in
// [−3, 4] (minShift), which must agree — and checks that the worst case
// is exactly Δ = max(L, 1): no smaller Δ would do. Under add/remove the
// worst least ‖χ‖₁ must be exactly ⌈(L+1)/2⌉ = Δ.
func TestTreeSensitivityIsTight(t *testing.T) {
	for levels := 0; levels <= 8; levels++ {
		bins, worst := 1<<levels, 0
		m := mustTree(t, bins, 1, ReplaceOne)
		for a := 1; a <= bins; a++ {
			for b := a + 1; b <= bins; b++ {
				change := func(i int) int { return b2i(a <= i && i < b) }
				cut := cutCosts(levels, bins, change)[levels][0][0]
				if levels <= 7 {
					if least := minShift(levels, bins, change); cut != least {
						t.Fatalf("replace-one, L=%d, move %d→%d: minimum cut %d, integer minimum %d", levels, b, a, cut, least)
					}
				}
				worst = max(worst, cut)
			}
		}
		if worst != levels {
			t.Errorf("replace-one, L=%d: worst least ‖χ‖₁ = %d, want L", levels, worst)
		}
		if worst > m.Sensitivity() || m.Sensitivity() > max(worst, 1) {
			t.Errorf("replace-one, L=%d: worst least ‖χ‖₁ = %d, Δ = %d", levels, worst, m.Sensitivity())
		}
	}
	for levels := 0; levels <= 8; levels++ {
		bins, worst := 1<<levels, 0
		for a := 1; a <= bins; a++ {
			worst = max(worst, minShift(levels, bins, func(i int) int { return b2i(i >= a) }))
		}
		if m := mustTree(t, bins, 1, AddRemove); worst != m.Sensitivity() {
			t.Errorf("add/remove, L=%d: worst least ‖χ‖₁ = %d, Δ = %d", levels, worst, m.Sensitivity())
		}
	}
}

// laplaceMoments returns the variance and fourth moment of Lap_Z(scale)
// by summing its probability mass function.
func laplaceMoments(scale float64) (mu2, mu4 float64) {
	r := math.Exp(-1 / scale)
	c := -math.Expm1(-1/scale) / (1 + r)
	for x := 1.0; x <= 80*scale+10; x++ {
		p := 2 * c * math.Pow(r, x)
		mu2 += x * x * p
		mu4 += x * x * x * x * p
	}
	return mu2, mu4
}

// sumMoments returns the variance and fourth moment of the sum of k
// independent copies of a symmetric variable with moments mu2, mu4.
func sumMoments(k int, mu2, mu4 float64) (v, m4 float64) {
	kf := float64(k)
	return kf * mu2, kf*mu4 + 3*kf*(kf-1)*mu2*mu2
}

// TestTreePrefixVariance compares the Monte-Carlo variance of the noise
// n·(F̂ − F) = η(i) over 3000 releases at N = 2^10, ε = 1 with the exact
// (L+1)·Var(Lap_Z(Δ/ε)), within 5 standard errors √((μ4 − σ⁴)/R) of a
// sample variance, μ4 the exact fourth moment of the sum of L + 1 node
// noises; and checks that a node scale off by a factor of 2 (variance
// ×4) or a variance off by a factor of 2 would lie outside that band.
func TestTreePrefixVariance(t *testing.T) {
	const releases = 3000
	for _, relation := range []Relation{ReplaceOne, AddRemove} {
		m := mustTree(t, 1<<10, 1, relation)
		L := m.Levels()
		mu2, mu4 := laplaceMoments(m.Scale())
		if rel := math.Abs(m.NodeVariance()-mu2) / mu2; rel > 1e-9 {
			t.Errorf("%v: NodeVariance() = %v, pmf sum gives %v", relation, m.NodeVariance(), mu2)
		}
		want, m4 := sumMoments(L+1, mu2, mu4)
		se := math.Sqrt((m4 - want*want) / releases)
		prefixes := []int{1, 2, 333, 512, 513, 1024}
		sumSq := make([]float64, len(prefixes))
		var cross12, cross512 float64 // Σ η(1)η(2), Σ η(512)η(513)
		for r := range releases {
			noise := make([]float64, len(prefixes))
			for k, i := range prefixes {
				noise[k] = float64(termNoise(m, seedOf(r), i))
				sumSq[k] += noise[k] * noise[k]
			}
			cross12 += noise[0] * noise[1]
			cross512 += noise[3] * noise[4]
		}
		for k, i := range prefixes {
			if math.Abs(m.PrefixVariance(i)-want) > 1e-9*want {
				t.Errorf("%v: PrefixVariance(%d) = %v, want %v", relation, i, m.PrefixVariance(i), want)
			}
			got := sumSq[k] / releases
			if z := (got - want) / se; math.Abs(z) > 5 {
				t.Errorf("%v: prefix %d: Monte-Carlo variance %.1f is %.1f s.e. from %.1f", relation, i, got, z, want)
			}
		}
		// A factor-2 error in the node scale (variance ×4) or in the
		// variance itself would fall outside the 5 s.e. band.
		for _, wrong := range []float64{4 * want, 2 * want, want / 2} {
			if math.Abs(wrong-want) < 10*se {
				t.Errorf("%v: the test cannot tell variance %.0f from %.0f (s.e. %.1f)", relation, wrong, want, se)
			}
		}
		// Shared nodes: prefixes 1 and 2 share L nodes, 512 and 513 only
		// the root. The s.e. of a sample covariance is about σ²/√R.
		for _, c := range []struct {
			name   string
			cross  float64
			shared int
		}{{"η(1)η(2)", cross12, L}, {"η(512)η(513)", cross512, 1}} {
			got, wantCov := c.cross/releases, float64(c.shared)*mu2
			if math.Abs(got-wantCov) > 5*want/math.Sqrt(releases) {
				t.Errorf("%v: mean %s = %.1f, want %d·NodeVariance = %.1f", relation, c.name, got, c.shared, wantCov)
			}
		}
		t.Logf("%v: Δ=%d, exact prefix variance %.1f (continuous 2(L+1)Δ²/ε² = %.1f), s.e. of a sample variance %.1f",
			relation, m.Sensitivity(), want, 2*float64(L+1)*m.Scale()*m.Scale(), se)
	}
}

func seedOf(r int) [32]byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], uint64(r)+1)
	return s
}

// TestTreeVarianceMatchesTheorem checks the exact discrete variance
// against the continuous 2(L+1)t² of Laplace nodes of scale t = Δ/ε, with
// Δ = L under replace-one — Thm 3.1's 2(L+1)³/ε² times (L/(L+1))²: the
// discrete one is lower by the relative amount 1/(12t²) + O(t⁻⁴).
func TestTreeVarianceMatchesTheorem(t *testing.T) {
	for _, c := range []struct {
		bins    int
		epsilon float64
	}{{1 << 10, 1}, {1 << 10, 0.1}, {1 << 16, 2}, {3, 5}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			m := mustTree(t, c.bins, c.epsilon, ReplaceOne)
			L := float64(m.Levels())
			tt := m.Scale()
			continuous := 2 * (L + 1) * tt * tt
			thm := 2 * math.Pow(L+1, 3) / (c.epsilon * c.epsilon) * (L / (L + 1)) * (L / (L + 1))
			if math.Abs(continuous-thm) > 1e-12*thm {
				t.Errorf("N=%d ε=%v: 2(L+1)t² = %v, want Thm 3.1's bound times (L/(L+1))² = %v", c.bins, c.epsilon, continuous, thm)
			}
			rel := 1 - m.PrefixVariance(1)/continuous
			if math.Abs(rel-1/(12*tt*tt)) > 1/(tt*tt*tt*tt) {
				t.Errorf("N=%d ε=%v: discrete variance is %.3g below 2(L+1)t², want ≈ 1/(12t²) = %.3g",
					c.bins, c.epsilon, rel, 1/(12*tt*tt))
			}
		})
	}
}

// TestTreeReleaseSumsItsTerms checks, node by node, that the noise of
// every prefix is the sum of the node noises Terms names, each node's
// value being the first draw of its own stream Stream("tree", node).
func TestTreeReleaseSumsItsTerms(t *testing.T) {
	m := mustTree(t, 777, 0.7, AddRemove)
	seed := seedOf(9)
	r := m.NewRelease(seed).(*treeRelease)
	if len(r.nodes) != m.Nodes() {
		t.Fatalf("release holds %d nodes, want Nodes() = %d", len(r.nodes), m.Nodes())
	}
	for i := 1; i <= m.Bins(); i++ {
		got := r.PrefixNoise(i)
		var sum int64
		for _, term := range m.Terms(i, nil) {
			sum += m.node.Sample(nodeStream(seed, treeNoiseDomain, term.Node)) * int64(term.Coef)
		}
		if got != sum {
			t.Fatalf("prefix %d: noise %d, sum of its terms %d", i, got, sum)
		}
	}
}

// BenchmarkTreeRelease times one release answering all N prefixes and
// reports the time per node noise drawn, to compare with
// BenchmarkDiscreteLaplace in package noise (the rest is the ChaCha20
// stream set-up and the node cache).
func BenchmarkTreeRelease(b *testing.B) {
	for _, bins := range []int{1 << 10, 1 << 16} {
		m := mustTree(b, bins, 1, ReplaceOne)
		b.Run(fmt.Sprintf("N=%d", bins), func(b *testing.B) {
			var seed [32]byte
			for b.Loop() {
				seed[0]++
				r := m.NewRelease(seed)
				for i := 1; i <= bins; i++ {
					r.PrefixNoise(i)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*m.Nodes()), "ns/node")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bins), "ns/prefix")
		})
	}
}
