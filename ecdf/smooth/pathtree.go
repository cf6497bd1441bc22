package smooth

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// pathTree is a noise pattern in which every prefix's noise is a path sum
// down a tree of nodes: prefix i receives y at its node o(i), where y is 0
// at a virtual ground above the roots and y_v = y_parent(v) + c_v·η_v along
// each edge. The tree (dp-ecdf Eq. 2), k-ary and gaussian-tree mechanisms
// have this form (see newPathTree); cascade does not.
//
// Nodes are numbered 0..len(parent)−1; the ground is node len(parent).
// Every subtree's prefixes form an interval [lo, hi] of 0-based prefixes.
type pathTree struct {
	n      int
	parent []int32   // parent node, the ground for a root
	weight []float64 // 1/c_v² of the edge above node v
	obs    []int32   // the prefix observed at node v, or −1
	// obsAbove is the prefix observed at v's parent, or −1.
	obsAbove []int32
	at       []int32 // the node of prefix i, o(i)
	lo, hi   []int32 // the subtree's prefixes; the ground's are [0, n−1]
	// Nodes are numbered children before parents (renumber); the
	// children of v are kids[kidsAt[v]:kidsAt[v+1]], in increasing lo.
	kids   []int32
	kidsAt []int32
	// solvers pools glsSolvers for reuse by later curves.
	solvers sync.Pool
}

// newPathTree recognises m's pattern as a pathTree, or returns false. It
// adds the prefixes in order (treeBuilder.addPrefix): the nodes a prefix
// shares with earlier ones must be the path from the ground to one of
// them, and its new nodes hang below it as a chain, the ones more
// prefixes use higher up. The pattern is a path-sum tree with interval
// subtrees exactly when this succeeds for every prefix with one
// coefficient per node and its own last node (no two prefixes with the
// same noise).
func newPathTree(m mechanism.Mechanism) (*pathTree, bool) {
	n := m.Bins()
	if m.Nodes()+n+2 > math.MaxInt32 {
		return nil, false // variable numbers are int32
	}
	uses := make([]int32, m.Nodes())
	var terms []mechanism.Term
	for i := 1; i <= n; i++ {
		terms = m.Terms(i, terms[:0])
		for _, t := range terms {
			if t.Node < 0 || t.Node >= len(uses) || t.Coef == 0 || math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
				return nil, false
			}
			uses[t.Node]++
		}
	}
	nodes := len(uses) // at most
	b := treeBuilder{
		pathTree: &pathTree{n: n, at: make([]int32, n),
			parent: make([]int32, 0, nodes), obs: make([]int32, 0, nodes),
			lo: make([]int32, 0, nodes+1), hi: make([]int32, 0, nodes+1)},
		uses:   uses,
		column: make([]int32, nodes),
		mark:   make([]int32, nodes),
		coef:   make([]float64, 0, nodes),
		depth:  make([]int32, 0, nodes),
		mech:   make([]int32, 0, nodes),
	}
	for i := range n {
		terms = m.Terms(i+1, terms[:0])
		if !b.addPrefix(i, terms) {
			return nil, false
		}
	}
	t := b.pathTree
	ground := int32(len(t.parent))
	t.weight = make([]float64, ground)
	for v, p := range t.parent {
		t.weight[v] = 1 / (b.coef[v] * b.coef[v])
		if p < 0 {
			t.parent[v] = ground
		}
	}
	t.lo, t.hi = append(t.lo, 0), append(t.hi, int32(n-1))
	t.renumber()
	return t, true
}

// treeBuilder adds the prefixes to a pathTree in order.
type treeBuilder struct {
	*pathTree
	uses   []int32   // prefixes using each mechanism node
	column []int32   // mechanism node → pathTree node + 1
	mark   []int32   // mechanism node → 1 + the last prefix using it
	coef   []float64 // pathTree node → coefficient
	depth  []int32   // pathTree node → depth below the ground
	mech   []int32   // pathTree node → mechanism node
	fresh  []mechanism.Term
}

// addPrefix places prefix i with the given terms. The nodes it shares
// with earlier prefixes must be a path from the ground (they were all
// used by prefix i−1 too: subtrees are intervals); its new nodes hang
// below that path, most used first.
func (b *treeBuilder) addPrefix(i int, terms []mechanism.Term) bool {
	deepest, old := int32(-1), 0
	b.fresh = b.fresh[:0]
	for _, term := range terms {
		if b.mark[term.Node] == int32(i+1) {
			return false // a node twice in one prefix
		}
		b.mark[term.Node] = int32(i + 1)
		v := b.column[term.Node] - 1
		if v < 0 {
			b.fresh = append(b.fresh, term)
			continue
		}
		if b.coef[v] != term.Coef || b.hi[v] != int32(i-1) {
			return false
		}
		b.hi[v] = int32(i)
		old++
		if deepest < 0 || b.depth[v] > b.depth[deepest] {
			deepest = v
		}
	}
	for v := deepest; v >= 0; v = b.parent[v] {
		if b.mark[b.mech[v]] != int32(i+1) {
			return false
		}
		old--
	}
	if old != 0 {
		return false
	}
	slices.SortFunc(b.fresh, func(x, y mechanism.Term) int {
		return cmp.Or(cmp.Compare(b.uses[y.Node], b.uses[x.Node]), cmp.Compare(x.Node, y.Node))
	})
	up, depth := deepest, int32(0)
	if deepest >= 0 {
		depth = b.depth[deepest] + 1
	}
	for _, term := range b.fresh {
		v := int32(len(b.parent))
		b.column[term.Node] = v + 1
		b.parent = append(b.parent, up)
		b.coef = append(b.coef, term.Coef)
		b.depth = append(b.depth, depth)
		depth++
		b.obs = append(b.obs, -1)
		b.lo = append(b.lo, int32(i))
		b.hi = append(b.hi, int32(i))
		b.mech = append(b.mech, int32(term.Node))
		up = v
	}
	if up < 0 || b.obs[up] >= 0 {
		return false // no noise, or the same noise as another prefix
	}
	b.obs[up], b.at[i] = int32(i), up
	return true
}

// renumber numbers the nodes in post-order — children before parents,
// siblings in increasing lo, the ground last — and fills kids and
// kidsAt. Nodes were numbered in order of first use, so each node's
// children already come in increasing lo.
func (t *pathTree) renumber() {
	t.children()
	ground := int32(len(t.parent))
	order := make([]int32, 0, ground+1)
	type frame struct{ v, next int32 }
	stack := []frame{{ground, t.kidsAt[ground]}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == t.kidsAt[f.v+1] {
			order = append(order, f.v)
			stack = stack[:len(stack)-1]
			continue
		}
		c := t.kids[f.next]
		f.next++
		stack = append(stack, frame{c, t.kidsAt[c]})
	}
	pos := make([]int32, ground+1)
	for k, v := range order {
		pos[v] = int32(k)
	}
	parent, weight, obs := make([]int32, ground), make([]float64, ground), make([]int32, ground)
	lo, hi := make([]int32, ground+1), make([]int32, ground+1)
	for v := range ground + 1 {
		k := pos[v]
		lo[k], hi[k] = t.lo[v], t.hi[v]
		if v < ground {
			parent[k], weight[k], obs[k] = pos[t.parent[v]], t.weight[v], t.obs[v]
		}
	}
	for i, v := range t.at {
		t.at[i] = pos[v]
	}
	t.parent, t.weight, t.obs, t.lo, t.hi = parent, weight, obs, lo, hi
	t.obsAbove = make([]int32, ground)
	for v, p := range parent {
		t.obsAbove[v] = -1
		if p < ground {
			t.obsAbove[v] = obs[p]
		}
	}
	t.children()
}

// children fills kids and kidsAt from parent: the children of v are
// kids[kidsAt[v]:kidsAt[v+1]], in increasing number.
func (t *pathTree) children() {
	ground := len(t.parent)
	t.kidsAt = make([]int32, ground+3) // counts shifted by two, trimmed below
	for _, p := range t.parent {
		t.kidsAt[p+2]++
	}
	for v := 2; v < len(t.kidsAt); v++ {
		t.kidsAt[v] += t.kidsAt[v-1]
	}
	t.kids = make([]int32, ground)
	for v, p := range t.parent {
		t.kids[t.kidsAt[p+1]] = int32(v)
		t.kidsAt[p+1]++
	}
	t.kidsAt = t.kidsAt[:ground+2]
}

// formCap bounds the variables of a form: a message has at most
// msgCap (its node's value and the blocks open at either end of its
// prefixes), and merging one child into its parent's form adds at most
// three more.
const (
	formCap = 6
	msgCap  = 3
)

// form is the quadratic ½xᵀHx − gᵀx (constant dropped) over the variables
// id[:n], what remains of the energy of a subtree once its interior
// variables are eliminated.
type form struct {
	n  int
	id [formCap]int32
	h  [formCap][formCap]float64
	g  [formCap]float64
}

// message is a form of at most msgCap variables passed from a node to its
// parent.
type message struct {
	n  int32
	id [msgCap]int32
	h  [msgCap][msgCap]float64
	g  [msgCap]float64
}

// index returns the position of variable v in f, adding it if absent.
func (f *form) index(v int32) int {
	for k := range f.n {
		if f.id[k] == v {
			return k
		}
	}
	k := f.n
	f.n++
	f.id[k], f.g[k] = v, 0
	for j := range f.n {
		f.h[k][j], f.h[j][k] = 0, 0
	}
	return k
}

// edge adds ½w(x_a − x_b + δ)², a variable id −1 standing for 0.
func (f *form) edge(a, b int32, w, delta float64) {
	if a == b {
		return // both ends share one block's value: a constant
	}
	i, j := -1, -1
	if a >= 0 {
		i = f.index(a)
		f.h[i][i] += w
		f.g[i] -= w * delta
	}
	if b >= 0 {
		j = f.index(b)
		f.h[j][j] += w
		f.g[j] += w * delta
	}
	if i >= 0 && j >= 0 {
		f.h[i][j] -= w
		f.h[j][i] -= w
	}
}

// load sets f to the message o, its variables in refs.
func (f *form) load(o *message, s *glsSolver) {
	f.n = int(o.n)
	for k := range f.n {
		f.id[k], f.g[k] = s.resolve(o.id[k]), o.g[k]
		for j := range f.n {
			f.h[k][j] = o.h[k][j]
		}
	}
}

// merge adds the form o to f.
func (f *form) merge(o *form) {
	var at [formCap]int
	for k := range o.n {
		at[k] = f.index(o.id[k])
	}
	for k := range o.n {
		f.g[at[k]] += o.g[k]
		for j := range o.n {
			f.h[at[k]][at[j]] += o.h[k][j]
		}
	}
}

// store writes f, which must have at most msgCap variables, to m as
// node's message, its variables in refs.
func (f *form) store(m *message, s *glsSolver, node int32) {
	if f.n > msgCap {
		panic("smooth: a node's message has more than three variables")
	}
	m.n = int32(f.n)
	for k := range f.n {
		m.id[k], m.g[k] = s.ref(f.id[k], node), f.g[k]
		m.h[k] = [msgCap]float64(f.h[k][:msgCap])
	}
}

// elimination records how a variable was eliminated from a form:
// x_v = (rhs − Σ_k h[k]·x_dep[k])·inv over its n deps (refs), inv the
// reciprocal of the pivot.
type elimination struct {
	v, n     int32
	inv, rhs float64
	dep      [formCap - 1]int32
	h        [formCap - 1]float64
}

// glsSolver solves, on one pathTree and curve F̂, the equality-constrained
// problems of the active-set iterations: minimise the node energy
// E = ½ Σ_v w_v (y_v − y_parent(v))² subject to g = F̂ + y_o being
// constant on blocks of prefixes (the active monotonicity rows), the
// first block fixed at 0 and the last at 1 when their bound rows are
// active.
//
// Variables are numbered: v for the value of unobserved node v, and
// ground+1+p for the value of the free block starting at prefix p. A
// node's message and eliminations depend only on the rows at and inside
// the ends of its prefixes (and on whether its end blocks are pinned), so
// they are stored with block variables named by a prefix inside the node
// ("refs", resolved through vars) and reused while those rows stay.
type glsSolver struct {
	t      *pathTree
	f      []float64
	ground int32
	// A subtree whose prefixes all lie in one block (value z) has, as seen
	// from its parent, the energy ½·s_v·(y_parent − z + m_v)²: s_v is the
	// conductance from the parent through v to its observed nodes tied
	// together, m_v their mean offset. Both depend on the tree and F̂ only,
	// not on the blocks.
	s, m []float64
	// alpha_v = w_v/(w_v + a_v), a_v = Σ s_c over v's children, and
	// 1 − alpha_v weigh the parent's value and the block's (less m_v) in
	// the value of an unobserved node of an unsplit subtree.
	alpha []float64
	// The partition of the active set: block b holds the prefixes
	// [start[b], start[b+1]); pin[b] is its fixed value, NaN when free;
	// blockOf[i] is the block of prefix i.
	blockOf []int32
	start   []int32
	pin     []float64
	split   bitset
	// vars resolves refs: vars[v] = v for a node, and vars[ground+1+i]
	// is the variable of prefix i's block.
	vars []int32
	// x holds the variables' values (varOf).
	x []float64
	// Per split node: its message and its eliminations elim[from[v]:to[v]]
	// (deps in refs); dirty marks the nodes to recompute.
	work     form
	child    form
	msgs     []message
	from, to []int32
	dirty    bitset
	elim     []elimination
	spare    []elimination // compact copies the live ones here, then swaps
	prev     []bool        // the rows of the last solve, nil before the first
	// Results: node values (the ground's last), the curve, the energy's
	// gradient ∂E/∂g_i, the multipliers of rows 0..n and max |λ|.
	y, g, grad, lambda []float64
	maxLambda          float64
}

func newGLSSolver(t *pathTree, f []float64) *glsSolver {
	s, _ := t.solvers.Get().(*glsSolver)
	if s == nil {
		nodes := len(t.parent) + 1
		s = &glsSolver{
			t: t, ground: int32(len(t.parent)),
			s: make([]float64, nodes), m: make([]float64, nodes), alpha: make([]float64, nodes),
			blockOf: make([]int32, t.n), vars: make([]int32, nodes+t.n), split: newBitset(nodes),
			elim: make([]elimination, 0, nodes+t.n),
			x:    make([]float64, nodes+t.n),
			msgs: make([]message, nodes), from: make([]int32, nodes), to: make([]int32, nodes), dirty: newBitset(nodes),
			y: make([]float64, nodes), g: make([]float64, t.n), grad: make([]float64, t.n), lambda: make([]float64, t.n+1),
		}
		for v := range nodes {
			s.vars[v] = int32(v)
		}
	}
	s.f, s.prev, s.elim = f, nil, s.elim[:0]
	clear(s.split)
	for v := range s.ground {
		if i := t.obs[v]; i >= 0 {
			s.s[v], s.m[v] = t.weight[v], f[i]
			continue
		}
		var a, am float64
		for _, c := range t.kids[t.kidsAt[v]:t.kidsAt[v+1]] {
			a += s.s[c]
			am += s.s[c] * s.m[c]
		}
		w := t.weight[v]
		s.alpha[v], s.m[v], s.s[v] = w/(w+a), am/a, w*a/(w+a)
	}
	return s
}

// release returns s to its tree's pool; its results must not be used
// after.
func (s *glsSolver) release() {
	s.f = nil
	s.t.solvers.Put(s)
}

// solve finds the least-energy curve that is constant on the blocks of
// the active rows act (row 0: g_1 ≥ 0; row r: g_{r+1} ≥ g_r; row n:
// g_n ≤ 1), not all active, and its multipliers.
func (s *glsSolver) solve(act []bool) {
	s.markDirty(act)
	s.partition(act)
	s.eliminate()
	s.backSubstitute()
	s.multipliers(act)
	s.prev = append(s.prev[:0], act...)
}

// markDirty marks the nodes whose message may differ from the last
// solve's: those containing a prefix next to a changed row, or one whose
// block became or ceased to be pinned, and their ancestors.
func (s *glsSolver) markDirty(act []bool) {
	if s.prev == nil {
		for v := range s.ground + 1 {
			s.dirty.add(v)
		}
		return
	}
	clear(s.dirty)
	n := s.t.n
	for r := range act {
		if act[r] != s.prev[r] {
			s.markPrefix(r - 1)
			s.markPrefix(r)
		}
	}
	lo0, lo1 := pinnedLow(s.prev), pinnedLow(act)
	for i := min(lo0, lo1); i < max(lo0, lo1); i++ {
		s.markPrefix(i)
	}
	hi0, hi1 := pinnedHigh(s.prev), pinnedHigh(act)
	for i := min(hi0, hi1); i < max(hi0, hi1) && i < n; i++ {
		s.markPrefix(i)
	}
}

// markPrefix marks the nodes above prefix i (ignoring i outside [0, n)).
func (s *glsSolver) markPrefix(i int) {
	if i < 0 || i >= s.t.n {
		return
	}
	s.dirty.add(s.ground)
	for v := s.t.at[i]; v != s.ground && !s.dirty.has(v); v = s.t.parent[v] {
		s.dirty.add(v)
	}
}

// pinnedLow returns the number of prefixes pinned at 0 by act;
// pinnedHigh the first prefix pinned at 1 (n if none).
func pinnedLow(act []bool) int {
	if !act[0] {
		return 0
	}
	i := 1
	for i < len(act)-1 && act[i] {
		i++
	}
	return i
}

func pinnedHigh(act []bool) int {
	n := len(act) - 1
	if !act[n] {
		return n
	}
	i := n - 1
	for i > 0 && act[i] {
		i--
	}
	return i
}

// partition sets the blocks of the active rows act.
func (s *glsSolver) partition(act []bool) {
	n := s.t.n
	s.start, s.pin = s.start[:0], s.pin[:0]
	b, st := int32(-1), int32(0)
	vars := s.vars[s.ground+1:]
	for i := range n {
		if i == 0 || !act[i] {
			b, st = b+1, int32(i)
			s.start = append(s.start, st)
			s.pin = append(s.pin, math.NaN())
		}
		s.blockOf[i], vars[i] = b, s.ground+1+st
	}
	s.start = append(s.start, int32(n))
	if act[0] {
		s.pin[0] = 0
	}
	if act[n] {
		s.pin[len(s.pin)-1] = 1
	}
}

// varOf returns the variable and offset of node v's value, y_v =
// x[id] + off, id −1 meaning 0: an unobserved node has its own variable,
// the ground 0, and the node of prefix i the value of i's block less F̂_i.
func (s *glsSolver) varOf(v int32) (int32, float64) {
	if v == s.ground {
		return -1, 0
	}
	i := s.t.obs[v]
	if i < 0 {
		return v, 0
	}
	z, val := s.blockVar(i)
	return z, val - s.f[i]
}

// blockVar returns the variable of the block holding prefix i and the
// value standing for it: (its number, 0) when free, (−1, pin) when pinned.
func (s *glsSolver) blockVar(i int32) (int32, float64) {
	if p := s.pin[s.blockOf[i]]; !math.IsNaN(p) {
		return -1, p
	}
	return s.vars[s.ground+1+i], 0
}

// resolve turns a ref into a variable number.
func (s *glsSolver) resolve(ref int32) int32 {
	return s.vars[ref]
}

// ref names variable v from inside node u: a block starting before u's
// prefixes by u's first prefix.
func (s *glsSolver) ref(v, u int32) int32 {
	if v > s.ground && v-s.ground-1 < s.t.lo[u] {
		return s.ground + 1 + s.t.lo[u]
	}
	return v
}

// eliminate runs over the split nodes, children first, recomputing the
// dirty ones. Node u's form starts with its own variable; each child adds
// its energy with the edge to u — a split child its message, an unsplit
// child ½s(y_u − z + m)² — then the child's unobserved variable and every
// block that can no longer meet another edge are eliminated: those inside
// u's prefixes, not u's own, ending before the next child.
func (s *glsSolver) eliminate() {
	if len(s.elim) > 2*len(s.x) { // a pass eliminates at most len(s.x)
		s.compact()
	}
	for w, word := range s.dirty {
		for ; word != 0; word &= word - 1 {
			s.eliminateDirty(int32(w*64 + bits.TrailingZeros64(word)))
		}
	}
}

// eliminateDirty decides whether the dirty node u is split — only the
// rows inside it do — and if so recomputes it.
func (s *glsSolver) eliminateDirty(u int32) {
	s.split.remove(u)
	if u == s.ground || s.blockOf[s.t.lo[u]] != s.blockOf[s.t.hi[u]] {
		s.split.add(u)
		s.eliminateAt(u)
	}
}

// eliminateAt computes split node u's message and eliminations.
func (s *glsSolver) eliminateAt(u int32) {
	t := s.t
	f := &s.work
	f.n = 0
	own := int32(-1)
	idu, offu := s.varOf(u)
	if idu >= 0 {
		f.index(idu)
		if idu > s.ground {
			own = idu
		}
	}
	s.from[u] = int32(len(s.elim))
	for _, c := range t.kids[t.kidsAt[u]:t.kidsAt[u+1]] {
		if s.split.has(c) {
			s.addChild(f, c, u, idu, offu)
		} else {
			z, val := s.blockVar(t.lo[c])
			f.edge(idu, z, s.s[c], offu+s.m[c]-val)
		}
		for j := 0; j < f.n; {
			v := f.id[j]
			if v > s.ground && v != own {
				st := v - s.ground - 1
				if st >= t.lo[u] && s.start[s.blockOf[st]+1]-1 <= t.hi[c] {
					s.eliminateVar(f, j, u)
					continue
				}
			}
			j++
		}
	}
	s.to[u] = int32(len(s.elim))
	f.store(&s.msgs[u], s, u)
}

// addChild adds to f the energy of u's split child c — its message and
// the edge to u — minimised over c's own variable when c is unobserved.
// That variable is first in c's message (a node's own variable is never
// eliminated at the node, and eliminateVar moves only later ones), and
// the minimum is written out: with p = h_cc + w and r = g_c − wδ,
// x_c = (r + w·x_u − Σ_j h_cj·x_j)/p, leaving w − w²/p on x_u², w·h_cj/p
// on x_u·x_j, h_jk − h_cj·h_ck/p on x_j·x_k, wδ + w·r/p on x_u and
// g_j − h_cj·r/p on x_j.
func (s *glsSolver) addChild(f *form, c, u, idu int32, offu float64) {
	m := &s.msgs[c]
	idc, offc := s.varOf(c)
	w, delta := s.t.weight[c], offc-offu
	if idc != c { // observed: its variable is a block's, kept
		g := &s.child
		g.load(m, s)
		g.edge(idc, idu, w, delta)
		f.merge(g)
		return
	}
	if m.id[0] != c {
		panic("smooth: an unobserved node's message does not start with its variable")
	}
	r, ip := m.g[0]-w*delta, 1/(m.h[0][0]+w)
	rp, wp := r*ip, w*ip
	s.elim = append(s.elim, elimination{v: c, inv: ip, rhs: r})
	e := &s.elim[len(s.elim)-1]
	iu := -1
	if idu >= 0 {
		iu = f.index(idu)
		f.h[iu][iu] += w - w*wp
		f.g[iu] += w*delta + w*rp
		e.dep[0], e.h[0], e.n = s.ref(idu, u), -w, 1
	}
	var at [msgCap]int
	for j := 1; j < int(m.n); j++ {
		at[j] = f.index(s.resolve(m.id[j]))
		e.dep[e.n], e.h[e.n] = s.ref(f.id[at[j]], u), m.h[0][j]
		e.n++
	}
	for j := 1; j < int(m.n); j++ {
		hj := m.h[0][j]
		f.g[at[j]] += m.g[j] - hj*rp
		if iu >= 0 {
			f.h[iu][at[j]] += wp * hj
			f.h[at[j]][iu] += wp * hj
		}
		for k := 1; k < int(m.n); k++ {
			f.h[at[j]][at[k]] += m.h[j][k] - hj*m.h[0][k]*ip
		}
	}
}

// eliminateVar records the variable at position k of f, in refs from
// node u, and replaces f by its Schur complement (the minimum over that
// variable).
func (s *glsSolver) eliminateVar(f *form, k int, u int32) {
	p, r := f.h[k][k], f.g[k]
	ip := 1 / p
	s.elim = append(s.elim, elimination{v: s.ref(f.id[k], u), inv: ip, rhs: r})
	e := &s.elim[len(s.elim)-1]
	for j := range f.n {
		if j != k {
			e.dep[e.n], e.h[e.n] = s.ref(f.id[j], u), f.h[k][j]
			e.n++
		}
	}
	for i := range f.n {
		if i == k || f.h[i][k] == 0 {
			continue
		}
		m := f.h[i][k] * ip
		for j := range f.n {
			f.h[i][j] -= m * f.h[k][j]
		}
		f.g[i] -= m * r
	}
	last := f.n - 1
	f.id[k], f.g[k] = f.id[last], f.g[last]
	for j := range f.n {
		f.h[k][j] = f.h[last][j]
	}
	for j := range f.n {
		f.h[j][k] = f.h[j][last]
	}
	f.n--
}

// compact drops the eliminations of nodes recomputed since.
func (s *glsSolver) compact() {
	elim := s.spare[:0]
	for u := range s.ground + 1 {
		if !s.split.has(u) || s.dirty.has(u) {
			continue
		}
		from := int32(len(elim))
		elim = append(elim, s.elim[s.from[u]:s.to[u]]...)
		s.from[u], s.to[u] = from, int32(len(elim))
	}
	s.spare, s.elim = s.elim, elim
}

// backSubstitute sets every node's value from the root down. The split
// nodes' eliminations, solved in reverse, give the values of the free
// blocks and of the unobserved split nodes; then prefix i's node has
// y = g_i − F̂_i, and an unobserved node inside an unsplit subtree
// minimises ½w(y − y_parent)² + ½a(y − z + m)², z its block's value. The
// edge flows w(y − y_parent) give the gradient ∂E/∂g_i as the net flow
// at prefix i's node.
func (s *glsSolver) backSubstitute() {
	t := s.t
	for w := len(s.split) - 1; w >= 0; w-- {
		for word := s.split[w]; word != 0; {
			b := 63 - bits.LeadingZeros64(word)
			word &^= 1 << b
			s.solveAt(int32(w*64 + b))
		}
	}
	for b := range len(s.pin) {
		z, v := s.blockVar(s.start[b])
		if z >= 0 {
			v = s.x[z]
		}
		for i := s.start[b]; i < s.start[b+1]; i++ {
			s.g[i] = v
		}
	}
	y, grad := s.y, s.grad
	clear(grad)
	y[s.ground] = 0
	for v := s.ground - 1; v >= 0; v-- {
		yp := y[t.parent[v]]
		i := t.obs[v]
		switch {
		case i >= 0:
			y[v] = s.g[i] - s.f[i]
		case s.split.has(v):
			y[v] = s.x[v]
		default:
			al := s.alpha[v]
			y[v] = al*yp + (1-al)*(s.g[t.lo[v]]-s.m[v])
		}
		flow := t.weight[v] * (y[v] - yp)
		if i >= 0 {
			grad[i] += flow
		}
		if j := t.obsAbove[v]; j >= 0 {
			grad[j] -= flow
		}
	}
}

// solveAt solves split node v's eliminations, in reverse.
func (s *glsSolver) solveAt(v int32) {
	for i := s.to[v] - 1; i >= s.from[v]; i-- {
		e := &s.elim[i]
		x := e.rhs
		for k := range e.n {
			x -= e.h[k] * s.x[s.resolve(e.dep[k])]
		}
		s.x[s.resolve(e.v)] = x * e.inv
	}
}

// bitset is a set of nodes, a bit each.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(v int32) bool { return b[v/64]&(1<<(uint32(v)%64)) != 0 }

func (b bitset) add(v int32) { b[v/64] |= 1 << (uint32(v) % 64) }

func (b bitset) remove(v int32) { b[v/64] &^= 1 << (uint32(v) % 64) }

// energy returns E = ½ Σ_v w_v (y_v − y_parent(v))² at the last solve.
func (s *glsSolver) energy() float64 {
	e := 0.0
	for v, p := range s.t.parent {
		d := s.y[v] - s.y[p]
		e += s.t.weight[v] * d * d
	}
	return e / 2
}

// multipliers computes the row multipliers λ from stationarity
// ∂E/∂g_i = λ_{i−1} − λ_i (1-based prefix i between rows i−1 and i),
// with λ = 0 on inactive rows: within a free block or one pinned at 1, λ
// accumulates from the row before it; within the block pinned at 0, from
// the row after it.
func (s *glsSolver) multipliers(act []bool) {
	lambda, grad := s.lambda, s.grad
	clear(lambda)
	for b := range len(s.pin) {
		lo, hi := int(s.start[b]), int(s.start[b+1])
		l := 0.0
		if b == 0 && act[0] {
			for i := hi - 1; i >= lo; i-- {
				l += grad[i]
				lambda[i] = l
			}
			continue
		}
		for i := lo; i < hi-1; i++ {
			l -= grad[i]
			lambda[i+1] = l
		}
		if b == len(s.pin)-1 && act[s.t.n] {
			lambda[hi] = l - grad[hi-1]
		}
	}
	s.maxLambda = maxAbs(lambda)
}

// maxAbs returns max |x_i| (0 for none), x finite. It compares rather
// than calling max, whose NaN and signed-zero rules make a slow chain.
func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		if a := math.Abs(v); a > m {
			m = a
		}
	}
	return m
}

// activeSet runs the primal–dual active-set method (Hintermüller, Ito
// and Kunisch 2002) from the rows act: solve the equality problem of act,
// then keep the active rows with λ ≥ 0 and add the inactive rows the
// solution violates, until the set repeats. Both tests allow for
// rounding: λ ≥ −10⁻¹⁰·max|λ| and slack ≥ −10⁻¹²·(1 + max|F̂|). It
// returns the number of iterations and whether the set settled within
// maxIter.
func (s *glsSolver) activeSet(act []bool, maxIter int) (int, bool) {
	n := s.t.n
	slackTol := 1e-12 * (1 + maxAbs(s.f))
	for it := 1; it <= maxIter; it++ {
		if !slices.Contains(act, false) {
			act[n] = false // g ≡ 0 and g ≡ 1 at once: free the top
		}
		s.solve(act)
		lambdaTol := 1e-10 * s.maxLambda
		changed := false
		for r := range act {
			if act[r] {
				if s.lambda[r] < -lambdaTol {
					act[r], changed = false, true
				}
			} else if s.slack(r) < -slackTol {
				act[r], changed = true, true
			}
		}
		if !changed {
			return it, true
		}
	}
	return maxIter, false
}

// slack returns row r's slack at the current curve (≥ 0 when it holds).
func (s *glsSolver) slack(r int) float64 {
	switch r {
	case 0:
		return s.g[0]
	case s.t.n:
		return 1 - s.g[r-1]
	}
	return s.g[r] - s.g[r-1]
}
