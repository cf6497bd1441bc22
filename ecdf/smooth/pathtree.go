package smooth

import (
	"cmp"
	"math"
	"slices"

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
	at     []int32   // the node of prefix i, o(i)
	lo, hi []int32   // the subtree's prefixes; the ground's are [0, n−1]
	// post lists the nodes, then the ground, children before parents;
	// the children of v are kids[kidsAt[v]:kidsAt[v+1]], in increasing lo.
	post   []int32
	kids   []int32
	kidsAt []int32
}

// newPathTree recognises m's pattern as a pathTree, or returns false. Each
// prefix's terms are ordered by the number of prefixes that use them,
// most first (ties by node number), and each term's parent is the one
// before it: the pattern is a path-sum tree exactly when this gives every
// node one parent and one coefficient, every prefix its own last node
// (no two prefixes with the same noise) and every subtree an interval of
// prefixes. Nested use-sets follow from the single parent: a node's
// prefixes are those whose path passes through it.
func newPathTree(m mechanism.Mechanism, n int) (*pathTree, bool) {
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
	b := treeBuilder{
		pathTree: &pathTree{n: n, at: make([]int32, n)},
		uses:     uses,
		column:   make([]int32, len(uses)),
		mark:     make([]int32, len(uses)),
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
	t.postOrder()
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

// postOrder fills post, kids and kidsAt. Nodes are numbered in order of
// first use, so each node's children come in increasing lo.
func (t *pathTree) postOrder() {
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
	t.post = make([]int32, 0, ground+1)
	type frame struct{ v, next int32 }
	stack := []frame{{int32(ground), t.kidsAt[ground]}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == t.kidsAt[f.v+1] {
			t.post = append(t.post, f.v)
			stack = stack[:len(stack)-1]
			continue
		}
		c := t.kids[f.next]
		f.next++
		stack = append(stack, frame{c, t.kidsAt[c]})
	}
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
	node, n int32
	id      [msgCap]int32
	h       [msgCap][msgCap]float64
	g       [msgCap]float64
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

// add adds the message o to f.
func (f *form) add(o *message) {
	var at [msgCap]int
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

// message returns f, which must have at most msgCap variables, as node's
// message.
func (f *form) message(node int32) message {
	if f.n > msgCap {
		panic("smooth: a node's message has more than three variables")
	}
	m := message{node: node, n: int32(f.n)}
	for k := range f.n {
		m.id[k], m.g[k] = f.id[k], f.g[k]
		for j := range f.n {
			m.h[k][j] = f.h[k][j]
		}
	}
	return m
}

// elimination records how a variable was eliminated from a form:
// x_v = (rhs − Σ h·x_dep)/pivot over its deps.
type elimination struct {
	v          int32
	pivot, rhs float64
	from, to   int32 // its deps in glsSolver.deps
}

type dep struct {
	v int32
	h float64
}

// glsSolver solves, on one pathTree and curve F̂, the equality-constrained
// problems of the active-set iterations: minimise the node energy
// E = ½ Σ_v w_v (y_v − y_parent(v))² subject to g = F̂ + y_o being
// constant on blocks of prefixes (the active monotonicity rows), the
// first block fixed at 0 and the last at 1 when their bound rows are
// active.
type glsSolver struct {
	t      *pathTree
	f      []float64
	ground int32
	// A subtree whose prefixes all lie in one block (value z) has, as seen
	// from its parent, the energy ½·s_v·(y_parent − z + m_v)²: s_v is the
	// conductance from the parent through v to its observed nodes tied
	// together, m_v their mean offset. Both depend on the tree and F̂ only,
	// not on the blocks; for an unobserved v, a_v is the conductance below v.
	s, m, a []float64
	// The partition of the active set: block b holds the prefixes
	// [start[b], start[b+1]); pin[b] is its fixed value, NaN when free.
	blockOf []int32
	start   []int32
	pin     []float64
	// Node v has the value y_v = x[id[v]] + off[v], id −1 meaning 0:
	// variable v for an unobserved node, ground+1+b for one observing a
	// prefix of free block b.
	id    []int32
	off   []float64
	x     []float64
	work  form
	stack []message
	elim  []elimination
	deps  []dep
	// Results: node values (the ground's last), the curve, the energy's
	// gradient ∂E/∂g_i, the multipliers of rows 0..n and the energy.
	y, g, grad, lambda []float64
	energy             float64
}

func newGLSSolver(t *pathTree, f []float64) *glsSolver {
	nodes := len(t.parent) + 1
	s := &glsSolver{
		t: t, f: f, ground: int32(len(t.parent)),
		s: make([]float64, nodes), m: make([]float64, nodes), a: make([]float64, nodes),
		blockOf: make([]int32, t.n), id: make([]int32, nodes), off: make([]float64, nodes),
		y: make([]float64, nodes), g: make([]float64, t.n), grad: make([]float64, t.n), lambda: make([]float64, t.n+1),
	}
	for _, v := range t.post[:len(t.post)-1] {
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
		s.a[v], s.m[v], s.s[v] = a, am/a, w*a/(w+a)
	}
	return s
}

// solve finds the least-energy curve that is constant on the blocks of
// the active rows act (row 0: g_1 ≥ 0; row r: g_{r+1} ≥ g_r; row n:
// g_n ≤ 1), not all active, and its multipliers.
func (s *glsSolver) solve(act []bool) {
	s.partition(act)
	s.bind()
	s.eliminate()
	s.backSubstitute()
	s.multipliers(act)
}

func (s *glsSolver) partition(act []bool) {
	n := s.t.n
	s.start, s.pin = s.start[:0], s.pin[:0]
	for i := range n {
		if i == 0 || !act[i] {
			s.start = append(s.start, int32(i))
			s.pin = append(s.pin, math.NaN())
		}
		s.blockOf[i] = int32(len(s.start) - 1)
	}
	s.start = append(s.start, int32(n))
	if act[0] {
		s.pin[0] = 0
	}
	if act[n] {
		s.pin[len(s.pin)-1] = 1
	}
}

// bind sets every node's variable and offset for the partition.
func (s *glsSolver) bind() {
	for v, i := range s.t.obs {
		switch {
		case i < 0:
			s.id[v], s.off[v] = int32(v), 0
		case !math.IsNaN(s.pin[s.blockOf[i]]):
			s.id[v], s.off[v] = -1, s.pin[s.blockOf[i]]-s.f[i]
		default:
			s.id[v], s.off[v] = s.ground+1+s.blockOf[i], -s.f[i]
		}
	}
	s.id[s.ground], s.off[s.ground] = -1, 0
	s.x = slices.Grow(s.x[:0], int(s.ground)+len(s.pin)+1)[:int(s.ground)+len(s.pin)+1]
}

// split reports whether v's prefixes lie in more than one block; the
// ground always counts as split.
func (s *glsSolver) split(v int32) bool {
	return v == s.ground || s.blockOf[s.t.lo[v]] != s.blockOf[s.t.hi[v]]
}

// block returns the variable of block b and the value standing for it:
// (ground+1+b, 0) when free, (−1, pin) when pinned.
func (s *glsSolver) block(b int32) (int32, float64) {
	if p := s.pin[b]; !math.IsNaN(p) {
		return -1, p
	}
	return s.ground + 1 + b, 0
}

// eliminate runs over the split nodes, children first. Node u's form
// starts with its own variable; each child adds its energy with the edge
// to u — a split child its message, an unsplit child ½s(y_u − z + m)² —
// then the child's unobserved variable and every block that can no
// longer meet another edge are eliminated: those inside u's prefixes,
// not u's own, ending before the next child.
func (s *glsSolver) eliminate() {
	t := s.t
	s.stack, s.elim, s.deps = s.stack[:0], s.elim[:0], s.deps[:0]
	for _, u := range t.post {
		if !s.split(u) {
			continue
		}
		f := &s.work
		f.n = 0
		own := int32(-1)
		if s.id[u] >= 0 {
			f.index(s.id[u])
			if s.id[u] > s.ground {
				own = s.id[u]
			}
		}
		kids := t.kids[t.kidsAt[u]:t.kidsAt[u+1]]
		split := 0
		for _, c := range kids {
			if s.split(c) {
				split++
			}
		}
		msgs := s.stack[len(s.stack)-split:]
		for _, c := range kids {
			if s.split(c) {
				f.add(&msgs[0])
				msgs = msgs[1:]
				f.edge(s.id[c], s.id[u], t.weight[c], s.off[c]-s.off[u])
				if s.id[c] == c {
					s.eliminateVar(f, f.index(c))
				}
			} else {
				z, val := s.block(s.blockOf[t.lo[c]])
				f.edge(s.id[u], z, s.s[c], s.off[u]+s.m[c]-val)
			}
			for j := 0; j < f.n; {
				v := f.id[j]
				if v > s.ground && v != own {
					b := v - s.ground - 1
					if s.start[b] >= t.lo[u] && s.start[b+1]-1 <= t.hi[c] {
						s.eliminateVar(f, j)
						continue
					}
				}
				j++
			}
		}
		s.stack = append(s.stack[:len(s.stack)-split], f.message(u))
	}
}

// eliminateVar records the variable at position k of f and replaces f by
// its Schur complement (the minimum over that variable).
func (s *glsSolver) eliminateVar(f *form, k int) {
	p, r := f.h[k][k], f.g[k]
	e := elimination{v: f.id[k], pivot: p, rhs: r, from: int32(len(s.deps))}
	for j := range f.n {
		if j != k {
			s.deps = append(s.deps, dep{f.id[j], f.h[k][j]})
		}
	}
	e.to = int32(len(s.deps))
	s.elim = append(s.elim, e)
	for i := range f.n {
		if i == k || f.h[i][k] == 0 {
			continue
		}
		m := f.h[i][k] / p
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

// backSubstitute solves for the eliminated variables in reverse order,
// then sets every node's value from the root down: an unobserved node
// inside an unsplit subtree minimises ½w(y − y_parent)² + ½a(y − z + m)².
func (s *glsSolver) backSubstitute() {
	t := s.t
	for k := len(s.elim) - 1; k >= 0; k-- {
		e := s.elim[k]
		v := e.rhs
		for _, d := range s.deps[e.from:e.to] {
			v -= d.h * s.x[d.v]
		}
		s.x[e.v] = v / e.pivot
	}
	s.y[s.ground] = 0
	for k := len(t.post) - 2; k >= 0; k-- {
		v := t.post[k]
		if id := s.id[v]; id > s.ground || id < 0 || s.split(v) {
			s.y[v] = s.off[v]
			if id >= 0 {
				s.y[v] += s.x[id]
			}
			continue
		}
		z, val := s.block(s.blockOf[t.lo[v]])
		if z >= 0 {
			val = s.x[z]
		}
		w, a := t.weight[v], s.a[v]
		s.y[v] = (w*s.y[t.parent[v]] + a*(val-s.m[v])) / (w + a)
	}
	for b := range len(s.pin) {
		z, v := s.block(int32(b))
		if z >= 0 {
			v = s.x[z]
		}
		for i := s.start[b]; i < s.start[b+1]; i++ {
			s.g[i] = v
		}
	}
}

// multipliers computes the gradient ∂E/∂g_i, the energy, and the row
// multipliers λ from stationarity ∂E/∂g_i = λ_{i−1} − λ_i (1-based
// prefix i between rows i−1 and i), with λ = 0 on inactive rows: within
// a free block or one pinned at 1, λ accumulates from the row before
// it; within the block pinned at 0, from the row after it.
func (s *glsSolver) multipliers(act []bool) {
	t := s.t
	clear(s.grad)
	s.energy = 0
	for v, p := range t.parent {
		d := s.y[v] - s.y[p]
		flow := t.weight[v] * d
		s.energy += flow * d / 2
		if i := t.obs[v]; i >= 0 {
			s.grad[i] += flow
		}
		if p != s.ground && t.obs[p] >= 0 {
			s.grad[t.obs[p]] -= flow
		}
	}
	clear(s.lambda)
	for b := range len(s.pin) {
		lo, hi := int(s.start[b]), int(s.start[b+1])
		if b == 0 && act[0] {
			l := 0.0
			for i := hi - 1; i >= lo; i-- {
				l += s.grad[i]
				s.lambda[i] = l
			}
			continue
		}
		l := 0.0
		for i := lo; i < hi; i++ {
			l -= s.grad[i]
			if i+1 < hi || (b == len(s.pin)-1 && act[t.n]) {
				s.lambda[i+1] = l
			}
		}
	}
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
	slackTol := 1e-12 * (1 + max(slices.Max(s.f), -slices.Min(s.f)))
	for it := 1; it <= maxIter; it++ {
		if !slices.Contains(act, false) {
			act[n] = false // g ≡ 0 and g ≡ 1 at once: free the top
		}
		s.solve(act)
		lambdaTol := 1e-10 * max(slices.Max(s.lambda), -slices.Min(s.lambda))
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
