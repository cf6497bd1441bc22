package audit

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// trie is the noise pattern of a mechanism whose prefixes are signed sums
// of independent node noises over a laminar family (tree, k-ary,
// partitioned): prefix i's noise is the sum along a root-to-vertex path
// of a rooted tree whose edges are the mechanism's nodes. Vertex 0 is the
// root, with value 0; every other vertex v is the partial sum of the
// nodes on its path, so that its value minus its parent's is
// ±coef[v]·η_node, coef[v] > 0 the node's coefficient in every prefix
// using it (1 for the tree and k-ary mechanisms; the ratio of the node's
// standard deviation to NodeVariance's for the partitioned one). A vertex
// ending the path of prefix i is observed (its value is the released noise
// of i); the others are latent. See doc.go.
type trie struct {
	parent   []int     // parent[v] < v, parent[0] = −1
	prefix   []int     // prefix[v]: the prefix i whose value v is, or 0 if latent
	coef     []float64 // coef[v]: |coefficient| of v's node (coef[0] = 0)
	vertexOf []int     // vertexOf[i−1]: the vertex of prefix i
	depth    int       // the largest number of edges on a root-to-vertex path
}

// newTrie builds the trie of m from its Terms: each prefix's nodes are
// ordered by decreasing number of prefixes using them (then by index),
// which lists a laminar family from the root down. It fails unless every
// node has one nonzero coefficient in every prefix using it and the
// nodes of any two prefixes share exactly a common initial path.
func newTrie(m mechanism.Mechanism) (*trie, error) {
	n := m.Bins()
	terms := make([][]int, n)
	uses := map[int]int{}
	coefs := map[int]float64{}
	for i := 1; i <= n; i++ {
		for _, t := range m.Terms(i, nil) {
			if t.Coef == 0 || math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
				return nil, fmt.Errorf("%w: %s: prefix %d has coefficient %v on node %d", ErrPattern, m.Name(), i, t.Coef, t.Node)
			}
			if c, ok := coefs[t.Node]; ok && c != t.Coef {
				return nil, fmt.Errorf("%w: %s: node %d has coefficients %v and %v", ErrPattern, m.Name(), t.Node, c, t.Coef)
			}
			coefs[t.Node] = t.Coef
			uses[t.Node]++
			terms[i-1] = append(terms[i-1], t.Node)
		}
	}
	tr := &trie{parent: []int{-1}, prefix: []int{0}, coef: []float64{0}, vertexOf: make([]int, n)}
	vertexOfNode := map[int]int{}
	for i, nodes := range terms {
		slices.SortFunc(nodes, func(a, b int) int {
			if c := cmp.Compare(uses[b], uses[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		v := 0
		for _, node := range nodes {
			w, ok := vertexOfNode[node]
			switch {
			case !ok:
				w = len(tr.parent)
				vertexOfNode[node] = w
				tr.parent = append(tr.parent, v)
				tr.prefix = append(tr.prefix, 0)
				tr.coef = append(tr.coef, math.Abs(coefs[node]))
			case tr.parent[w] != v:
				return nil, fmt.Errorf("%w: %s: the prefixes using node %d do not form a laminar family", ErrPattern, m.Name(), node)
			}
			v = w
		}
		if tr.prefix[v] != 0 || v == 0 {
			return nil, fmt.Errorf("%w: %s: prefix %d has the same noise as another prefix", ErrPattern, m.Name(), i+1)
		}
		tr.prefix[v], tr.vertexOf[i] = i+1, v
		tr.depth = max(tr.depth, len(nodes))
	}
	return tr, nil
}

// minShift returns min Σ_v w[v]·|χ_v| over node shifts χ that move the
// prefixes First..Last by +1 and no other: the least weighted ℓ1 norm of
// node shift explaining that change of the released prefixes (w = 1
// everywhere: the least ‖χ‖₁). On a tree this is a weighted
// total-variation problem; by the coarea formula an optimum takes every
// latent value in {0, 1} (each level set's cut costs its weight), so a
// min-sum pass over latent values in {0, 1} is exact, and the optimum is
// an integer shift.
func (tr *trie) minShift(first, last int, w []float64) float64 {
	inf := math.Inf(1)
	// cost[v][x]: least cost of v's subtree, edge to the parent included,
	// when the parent has value x ∈ {0, 1}; sub[v][s]: children's cost at
	// v's own value s.
	sub := make([][2]float64, len(tr.parent))
	for v := len(tr.parent) - 1; v >= 1; v-- {
		var cost [2]float64
		if i := tr.prefix[v]; i != 0 {
			d := b2i(i >= first && i <= last)
			for x := range 2 {
				cost[x] = w[v]*float64(abs(d-x)) + sub[v][d]
			}
		} else {
			for x := range 2 {
				cost[x] = inf
				for s := range 2 {
					cost[x] = min(cost[x], w[v]*float64(abs(s-x))+sub[v][s])
				}
			}
		}
		p := tr.parent[v]
		sub[p][0] += cost[0]
		sub[p][1] += cost[1]
	}
	return sub[0][0]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func abs(x int) int { return max(x, -x) }

// laplaceLikelihood evaluates the log-likelihood of the released prefix
// noise of a trie mechanism with independent Laplace node noise, of scale
// b[v] (in record units) on the edge above vertex v: the sum over the
// latent vertices' values of the product of the edge densities
// exp(−|child − parent|/b[v]), by one upward sum-product pass. Latent values live on the grid k·h,
// |k| ≤ radius; with h = 1 record unit = 1 integer unit it is the exact
// discrete Laplace likelihood (up to a constant factor per edge, which
// cancels in a likelihood ratio). It is not safe for concurrent use.
type laplaceLikelihood struct {
	tr     *trie
	b      []float64 // b[v]: the scale of the edge above v
	rho    []float64 // rho[v] = e^{−h/b[v]}, the kernel ratio of one grid step
	h      float64
	radius int
	// acc[v] (latent v) is the product of v's children's messages on the
	// grid, times e^{scale[v]}; peak[v] is its largest entry and
	// started[v] whether a first message has set it. For an observed v,
	// scale[v] is the log of the product of its children's messages at
	// its value value[v].
	acc     [][]float64
	peak    []float64
	started []bool
	scale   []float64
	value   []float64
	conv    []float64 // scratch: a profile, or the forward half of a convolution
	back    []float64 // scratch: the backward half of a convolution
}

// The grid: gridRadius prior standard deviations of the deepest latent
// value (a sum of depth Laplace noises of the largest scale) plus one
// record (the pair's shift) on each side of 0, in steps of one lattice
// unit, or of b/12 for the smallest scale b when that is coarser
// (gridPoints per scale), or of the span/maxRadius when the span is too
// wide (noise far below one record: a gross under-noising, which a
// coarse grid still shows).
const (
	gridPoints = 12
	gridRadius = 6
	maxRadius  = 2048
)

// newLaplaceLikelihood returns the evaluator for trie tr, node scales b
// (b[v] on the edge above v; b[0] unused) and record unit 1/unit (the
// lattice spacing, in record units).
func newLaplaceLikelihood(tr *trie, b []float64, unit float64) *laplaceLikelihood {
	h, radius := tr.grid(b, unit)
	n := len(tr.parent)
	rho := make([]float64, n)
	for v := 1; v < n; v++ {
		rho[v] = math.Exp(-h / b[v])
	}
	l := &laplaceLikelihood{
		tr: tr, b: b, h: h, rho: rho, radius: radius,
		acc: make([][]float64, n), peak: make([]float64, n), started: make([]bool, n),
		scale: make([]float64, n), value: make([]float64, n),
		conv: make([]float64, 2*radius+1), back: make([]float64, 2*radius+1),
	}
	for v := range tr.parent {
		if tr.prefix[v] == 0 && v != 0 {
			l.acc[v] = make([]float64, 2*radius+1)
		}
	}
	return l
}

// grid returns the step h of the latent values' grid (in record units)
// and its half-width in steps, for node scales b (b[0] unused) and
// lattice step 1/unit.
func (tr *trie) grid(b []float64, unit float64) (h float64, radius int) {
	lo, hi := math.Inf(1), 0.0
	for _, x := range b[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	span := gridRadius*hi*math.Sqrt(2*float64(tr.depth)) + 1
	h = max(1/unit, lo/gridPoints, span/maxRadius)
	return h, int(math.Ceil(span / h))
}

// logLikelihood returns log p(x) up to a constant, x[i−1] the released
// noise of prefix i in record units.
func (l *laplaceLikelihood) logLikelihood(x []float64) float64 {
	tr := l.tr
	for v := range tr.parent {
		l.scale[v], l.value[v], l.started[v] = 0, 0, false
		if i := tr.prefix[v]; i != 0 {
			l.value[v] = x[i-1]
		}
	}
	for v := len(tr.parent) - 1; v >= 1; v-- {
		p := tr.parent[v]
		parentObserved := p == 0 || tr.prefix[p] != 0
		switch {
		case tr.prefix[v] != 0 && parentObserved:
			l.scale[p] += l.scale[v] - math.Abs(l.value[v]-l.value[p])/l.b[v]
		case tr.prefix[v] != 0:
			dmin := l.profile(v, l.value[v], l.conv)
			l.absorb(p, l.conv, nil, 1)
			l.scale[p] += l.scale[v] - dmin/l.b[v]
		case l.peak[v] <= 0:
			l.scale[p] = math.Inf(-1) // no grid value fits v's children
		case parentObserved:
			dmin := l.profile(v, l.value[p], l.conv)
			l.scale[p] += l.scale[v] - dmin/l.b[v] + math.Log(dot(l.acc[v], l.conv))
		default:
			m := l.peak[v]
			l.convolve(v, l.acc[v], l.conv, l.back)
			l.absorb(p, l.conv, l.back, 1/m)
			l.scale[p] += l.scale[v] + math.Log(m)
		}
	}
	return l.scale[0]
}

// absorb multiplies acc[p] by f·(msg + msg2) entrywise (sets it, for p's
// first message; msg2 may be nil) and updates peak[p]. Entries below 1e−200 become 0, so no
// denormal arithmetic follows; when the peak falls below 1e−100 (a latent
// vertex with many children) acc[p] is rescaled into scale[p].
func (l *laplaceLikelihood) absorb(p int, msg, msg2 []float64, f float64) {
	dst := l.acc[p]
	var m float64
	for k, x := range msg {
		if msg2 != nil {
			x += msg2[k]
		}
		v := f * x
		if l.started[p] {
			v *= dst[k]
		}
		if v < 1e-200 {
			v = 0
		}
		dst[k] = v
		if v > m {
			m = v
		}
	}
	l.started[p] = true
	if m > 0 && m < 1e-100 {
		for k := range dst {
			dst[k] /= m
		}
		l.scale[p] += math.Log(m)
		m = 1
	}
	l.peak[p] = m
}

// profile sets out[k] = exp(−(|z − g_k| − dmin)/b) over the grid
// g_k = (k − radius)·h, b the scale of the edge above v, and returns
// dmin, the distance from z to the nearest grid point, so that the
// largest entry is 1: one exponential on each side of z, then the kernel
// ratio per step.
func (l *laplaceLikelihood) profile(v int, z float64, out []float64) (dmin float64) {
	b, rho := l.b[v], l.rho[v]
	n := len(out)
	k0 := int(math.Floor(z/l.h)) + l.radius // last grid index at or left of z
	left, right := min(max(k0, -1), n-1), max(min(k0+1, n), 0)
	dmin = math.Inf(1)
	if left >= 0 {
		dmin = z - l.grid(left)
	}
	if right < n {
		dmin = min(dmin, l.grid(right)-z)
	}
	if left >= 0 {
		decay(out[:left+1], math.Exp(-(z-l.grid(left)-dmin)/b), rho, true)
	}
	if right < n {
		decay(out[right:], math.Exp(-(l.grid(right)-z-dmin)/b), rho, false)
	}
	return dmin
}

// decay fills out with e, e·ρ, e·ρ², … starting from its last entry
// (backwards) or its first, and with zeros once the terms fall below
// 1e−300.
func decay(out []float64, e, rho float64, backwards bool) {
	for j := range out {
		k := j
		if backwards {
			k = len(out) - 1 - j
		}
		out[k] = e
		if e *= rho; e < 1e-300 {
			e = 0
		}
	}
}

func (l *laplaceLikelihood) grid(k int) float64 { return float64(k-l.radius) * l.h }

// convolve splits Σ_k ρ^|j−k|·in[k] (the Laplace kernel of the edge
// above v on the grid, truncated to it) into fwd[j] = Σ_{k≤j} and
// back[j] = Σ_{k>j}, two exponential recursions run in one loop
// (independent, so they overlap).
func (l *laplaceLikelihood) convolve(v int, in, fwd, back []float64) {
	n, rho := len(in), l.rho[v]
	var f, b float64
	back[n-1] = 0
	for j := range n {
		f = in[j] + rho*f
		fwd[j] = f
		if k := n - 2 - j; k >= 0 {
			b = rho * (in[k+1] + b)
			back[k] = b
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}
