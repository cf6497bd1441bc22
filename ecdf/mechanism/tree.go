package mechanism

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// Tree is the hierarchical mechanism of dp-ecdf Eq. (2): with
// L = ⌈log2 N⌉ and independent node noises η_{j,l} (level l = 0..L,
// j = 1..⌈N/2^l⌉), prefix i receives the path sum
//
//	η(i) = Σ_{l=0..L} η_{⌈i/2^l⌉, l}.
//
// Node (j, l) is shared by the prefixes i ∈ [(j−1)2^l + 1, j·2^l]: the
// prefix noise vector is η·Z_{L,0} (proof of Thm 3.1, Eq. 6), a signed
// sum of indicators of dyadic intervals of prefix indices.
//
// Privacy. Neighbouring data sets change the vector of prefix counts by
// an indicator vector D of prefix indices, and the release of every
// prefix is ε-DP as soon as D = χ·Z_{L,0} for an integer node shift χ
// with ‖χ‖₁ ≤ Δ and η_{j,l} ~ Lap_Z(Δ/ε): the noise shifted by χ explains
// the difference, at a likelihood ratio of at most e^{ε‖χ‖₁/Δ}.
//
//   - Replace-one (n public): moving one instance from bin a to bin b
//     changes the prefixes [min(a,b), max(a,b) − 1] by ±1. Thm 3.1 (via
//     Lemma 1 and Eq. 9) explains any such interval with ‖χ‖₁ ≤ L + 1,
//     so Δ = L + 1 and η_{j,l} ~ Lap((L+1)/ε), as in Eq. (2). The
//     proof's construction reaches L + 1 for odd L; the least ‖χ‖₁ over
//     all moves is exactly L for 1 ≤ L ≤ 6 (tree_test.go enumerates
//     both), so Δ = L would likely do, but only L + 1 is proved for
//     every L and it is what the paper uses.
//   - Add/remove: adding one instance in bin a adds 1 to the suffix of
//     prefixes [a, N], i.e. 1_{[a, 2^L]} on the released indices. Lemma 1
//     (χ⁺ with d = 0, b = a) writes it with ⌈(L+1)/2⌉ signed nodes: the
//     non-adjacent form of its length 2^L − a + 1 read from the right
//     end. So Δ = ⌈(L+1)/2⌉, not the L + 1 of "each instance lies in
//     L + 1 tree nodes", which holds for trees over bins, not for the
//     path sums over prefixes used here (dp-ecdf Thm 0.A.1 uses the same
//     bound for continual counting).
//
// Noise. Each η_{j,l} is an exact discrete Laplace Lap_Z(Δ/ε) (package
// noise), so prefix i has variance exactly (L+1)·2r/(1−r)², r = e^{−ε/Δ}
// — slightly below Thm 3.1's continuous 2(L+1)³/ε² (replace-one), by
// the relative amount 1/(12 t²) + O(t^{−4}), t = Δ/ε.
type Tree struct {
	bins     int
	levels   int // L
	epsilon  float64
	relation Relation
	delta    int   // ℓ1 sensitivity Δ in node units
	offsets  []int // offsets[l] is the index of node (1, l); offsets[L+1] = Nodes()
	node     *noise.DiscreteLaplace
}

// maxBins bounds N so that node indices and their offsets fit an int.
const maxBins = 1 << 48

// treeNoiseDomain separates the tree's node streams from other uses of
// a release seed (noise.Seed.Stream): the ASCII bytes "tree".
const treeNoiseDomain uint32 = 0x74726565

// NewTree returns the tree mechanism for p.Bins prefixes at ε = p.Epsilon
// under p.Relation. It is pure ε-DP: p.Delta must be 0 or a valid δ in
// [0, 1) (it is not used); p.Name and p.K are not used.
func NewTree(p Params) (*Tree, error) {
	if p.Bins < 1 || p.Bins > maxBins {
		return nil, fmt.Errorf("tree: bins %d: must be between 1 and 2^48", p.Bins)
	}
	if math.IsNaN(p.Epsilon) || math.IsInf(p.Epsilon, 0) || p.Epsilon <= 0 {
		return nil, fmt.Errorf("tree: epsilon %v: must be positive and finite", p.Epsilon)
	}
	if math.IsNaN(p.Delta) || p.Delta < 0 || p.Delta >= 1 {
		return nil, fmt.Errorf("tree: delta %v: must be in [0, 1)", p.Delta)
	}
	if p.Relation != ReplaceOne && p.Relation != AddRemove {
		return nil, fmt.Errorf("tree: unknown neighbouring relation %v", p.Relation)
	}
	levels := bits.Len(uint(p.Bins - 1))
	t := &Tree{
		bins:     p.Bins,
		levels:   levels,
		epsilon:  p.Epsilon,
		relation: p.Relation,
		delta:    treeSensitivity(levels, p.Relation),
		offsets:  make([]int, levels+2),
	}
	for l := 0; l <= levels; l++ {
		t.offsets[l+1] = t.offsets[l] + (p.Bins-1)>>l + 1 // ⌈N/2^l⌉ nodes at level l
	}
	var err error
	if t.node, err = noise.NewDiscreteLaplace(t.Scale()); err != nil {
		return nil, fmt.Errorf("tree: epsilon %v with sensitivity %d: %w", p.Epsilon, t.delta, err)
	}
	return t, nil
}

// treeSensitivity is Δ, the largest ‖χ‖₁ the privacy proof needs to
// explain one change of a neighbour (see Tree).
func treeSensitivity(levels int, r Relation) int {
	if r == AddRemove {
		return (levels + 2) / 2 // ⌈(L+1)/2⌉
	}
	return levels + 1
}

// Name returns "tree".
func (t *Tree) Name() string { return "tree" }

// Bins returns N.
func (t *Tree) Bins() int { return t.bins }

// Epsilon returns ε: the release of all N prefixes is ε-DP under Relation.
func (t *Tree) Epsilon() float64 { return t.epsilon }

// Delta returns 0: the tree mechanism is pure ε-DP.
func (t *Tree) Delta() float64 { return 0 }

// Relation returns the neighbouring relation of the guarantee.
func (t *Tree) Relation() Relation { return t.relation }

// Levels returns L = ⌈log2 N⌉; every prefix sums L + 1 node noises.
func (t *Tree) Levels() int { return t.levels }

// Sensitivity returns Δ: L + 1 under replace-one, ⌈(L+1)/2⌉ under
// add/remove.
func (t *Tree) Sensitivity() int { return t.delta }

// Scale returns Δ/ε, the scale of each node's discrete Laplace noise.
func (t *Tree) Scale() float64 { return float64(t.delta) / t.epsilon }

// NodeVariance returns the exact variance 2r/(1−r)², r = e^{−ε/Δ}, of one
// node noise Lap_Z(Δ/ε) (the continuous Lap(Δ/ε) would have 2(Δ/ε)²).
func (t *Tree) NodeVariance() float64 { return t.node.Variance() }

// PrefixVariance returns (L+1)·NodeVariance(), the same for every prefix
// i: Thm 3.1's 2(L+1)³/ε² under replace-one, up to the discrete
// correction (see Tree).
func (t *Tree) PrefixVariance(i int) float64 { return t.MeanVariance() }

// MeanVariance returns (L+1)·NodeVariance().
func (t *Tree) MeanVariance() float64 { return float64(t.levels+1) * t.NodeVariance() }

// Nodes returns Σ_{l=0..L} ⌈N/2^l⌉, the number of node noises.
func (t *Tree) Nodes() int { return t.offsets[t.levels+1] }

// Terms appends the L + 1 nodes (j, l) = (⌈i/2^l⌉, l) of prefix i, each
// with coefficient 1, numbered offsets[l] + j − 1. It panics unless
// 1 ≤ i ≤ N, as an out-of-range index does.
func (t *Tree) Terms(i int, dst []Term) []Term {
	t.checkPrefix(i)
	for l := 0; l <= t.levels; l++ {
		dst = append(dst, Term{Node: t.nodeIndex(i, l), Coef: 1})
	}
	return dst
}

// nodeIndex numbers node (⌈i/2^l⌉, l) level by level.
func (t *Tree) nodeIndex(i, l int) int { return t.offsets[l] + (i-1)>>l }

func (t *Tree) checkPrefix(i int) {
	if i < 1 || i > t.bins {
		panic(fmt.Sprintf("tree: prefix %d out of range [1, %d]", i, t.bins))
	}
}

// NewRelease returns the release whose node noise η_{j,l} is drawn, on
// first use, from noise.Seed(seed).Stream(domain "tree", node index).
func (t *Tree) NewRelease(seed [32]byte) Release {
	path := make([]int, t.levels+1)
	for l := range path {
		path[l] = -1
	}
	return &treeRelease{tree: t, nodes: newNodeNoises(seed, treeNoiseDomain), path: path, pathNoise: make([]int64, t.levels+1)}
}

// treeRelease caches the node noises drawn so far: memory grows with the
// nodes queried, not with N. The nodes of the last prefix queried are
// also kept by level, so that a scan over consecutive prefixes, which
// share all but a few nodes, rarely touches the map. It is safe for
// concurrent use.
type treeRelease struct {
	tree      *Tree
	mu        sync.Mutex
	nodes     nodeNoises
	path      []int   // path[l]: node index at level l of the last prefix, or −1
	pathNoise []int64 // pathNoise[l]: its noise
}

// PrefixNoise returns η(i) = Σ_{l=0..L} η_{⌈i/2^l⌉,l}. It panics unless
// 1 ≤ i ≤ N.
func (r *treeRelease) PrefixNoise(i int) int64 {
	r.tree.checkPrefix(i)
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum int64
	for l := 0; l <= r.tree.levels; l++ {
		if node := r.tree.nodeIndex(i, l); r.path[l] != node {
			r.path[l], r.pathNoise[l] = node, r.nodes.get(node, r.tree.node)
		}
		sum += r.pathNoise[l]
	}
	return sum
}
