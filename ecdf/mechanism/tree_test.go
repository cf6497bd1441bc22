package mechanism

import (
	"math"
	"strings"
	"testing"
)

// Compile-time check that *Tree is a Mechanism.
var _ Mechanism = (*Tree)(nil)

func mustTree(t testing.TB, bins int, epsilon float64, r Relation) *Tree {
	t.Helper()
	m, err := NewTree(Params{Name: "tree", Bins: bins, Epsilon: epsilon, Relation: r})
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
		_, err := NewTree(c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewTree(%+v) error = %v, want one naming %q", c.p, err, c.want)
		}
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
		{2, 1, 3, ReplaceOne, 2},
		{2, 1, 3, AddRemove, 1},
		{5, 3, 5 + 3 + 2 + 1, ReplaceOne, 4},
		{5, 3, 5 + 3 + 2 + 1, AddRemove, 2},
		{256, 8, 511, ReplaceOne, 9},
		{256, 8, 511, AddRemove, 5},
	} {
		m := mustTree(t, c.bins, 1, c.relation)
		if m.Levels() != c.levels || m.Nodes() != c.nodes || m.Sensitivity() != c.delta {
			t.Errorf("N=%d %v: L=%d nodes=%d Δ=%d, want %d %d %d", c.bins, c.relation,
				m.Levels(), m.Nodes(), m.Sensitivity(), c.levels, c.nodes, c.delta)
		}
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
	m     *Tree
	terms [][]Term // terms[i] = Terms(i), 1 ≤ i ≤ N
}

func newDyadicShifts(m *Tree) *dyadicShifts {
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

// TestTreePrivacyReplaceOne makes the proof of Thm 3.1 executable: for
// N = 2^8 and every move of one instance from bin a to bin b, it builds
// the node shift χ that explains the change of the prefix counts, and
// checks Z·χ = the change and ‖χ‖₁ ≤ Δ = L + 1.
// With η ~ Lap_Z(Δ/ε) every output is then at most e^{ε‖χ‖₁/Δ} ≤ e^ε
// times likelier under one data set than under the other.
func TestTreePrivacyReplaceOne(t *testing.T) {
	for _, bins := range []int{1, 2, 3, 100, 128, 256} {
		m := mustTree(t, bins, 1, ReplaceOne)
		d := newDyadicShifts(m)
		L, worst := m.Levels(), 0
		for a := 1; a <= bins; a++ {
			for b := a; b <= bins; b++ {
				// An instance moved from bin b to bin a adds 1 to the
				// prefixes a..b−1 (and from a to b subtracts it: −χ).
				chi := d.interval(a-1, b-1)
				if !d.explains(chi, func(i int) int { return b2i(a <= i && i < b) }) {
					t.Fatalf("N=%d: χ for the move %d→%d does not explain the prefix change", bins, b, a)
				}
				worst = max(worst, chi.l1())
			}
		}
		if worst > m.Sensitivity() {
			t.Errorf("N=%d: a move needs ‖χ‖₁ = %d > Δ = %d", bins, worst, m.Sensitivity())
		}
		t.Logf("N=%d, L=%d: largest ‖χ‖₁ over all moves %d, Δ = %d", bins, L, worst, m.Sensitivity())
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
// [−3, 4], wide enough for 0/1 changes (a narrower window can only
// raise the minimum, and the enumeration below finds it equal to the
// constructive bound).
func minShift(levels, bins int, change func(i int) int) int {
	const lo, hi = -3, 4
	var cost func(l, j int) [hi - lo + 1]int // node (j, l), 1-based j
	cost = func(l, j int) (out [hi - lo + 1]int) {
		if l == 0 {
			for s := lo; s <= hi; s++ {
				if j <= bins {
					out[s-lo] = abs(change(j) - s)
				}
			}
			return out
		}
		left, right := cost(l-1, 2*j-1), cost(l-1, 2*j)
		for s := lo; s <= hi; s++ {
			best := math.MaxInt
			for s2 := lo; s2 <= hi; s2++ { // s2 = s + χ_v
				best = min(best, abs(s2-s)+left[s2-lo]+right[s2-lo])
			}
			out[s-lo] = best
		}
		return out
	}
	return cost(levels, 1)[0-lo]
}

func abs(x int) int { return max(x, -x) }

// TestTreeSensitivityIsTight computes, for small trees, the least
// ‖χ‖₁ that explains each neighbour change and checks that the worst
// case is exactly L under replace-one (N = 2^L ≥ 2) — so Δ = L + 1 of
// Thm 3.1 is one above the optimum of this argument — and exactly
// ⌈(L+1)/2⌉ = Δ under add/remove. A Δ below these would break the
// argument of Thm 3.1.
func TestTreeSensitivityIsTight(t *testing.T) {
	for levels := 0; levels <= 6; levels++ {
		bins, worst := 1<<levels, 0
		for a := 1; a <= bins; a++ {
			for b := a + 1; b <= bins; b++ {
				worst = max(worst, minShift(levels, bins, func(i int) int { return b2i(a <= i && i < b) }))
			}
		}
		if worst != levels {
			t.Errorf("replace-one, L=%d: worst least ‖χ‖₁ = %d, want L", levels, worst)
		}
		if m := mustTree(t, bins, 1, ReplaceOne); worst > m.Sensitivity() {
			t.Errorf("replace-one, L=%d: worst least ‖χ‖₁ = %d exceeds Δ = %d", levels, worst, m.Sensitivity())
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
