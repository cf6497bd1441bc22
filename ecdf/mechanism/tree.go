package mechanism

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// tree is the hierarchical mechanism of dp-ecdf Eq. (2): with
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
// an integer vector D of prefix indices, and the release of every
// prefix is ε-DP as soon as D = χ·Z_{L,0} for an integer node shift χ
// with ‖χ‖₁ ≤ Δ and η_{j,l} ~ Lap_Z(Δ/ε): the noise shifted by χ explains
// the difference, at a likelihood ratio of at most e^{ε‖χ‖₁/Δ}.
//
// The least ‖χ‖₁ is a minimum cut. Prefix i's noise is the sum of the
// node noises on the path from leaf i to the root, so χ realises D iff
// χ_v = g(v) − g(parent v) for a labelling g of the nodes with
// g(leaf i) = D_i and g = 0 on the virtual parent of the root (g(v) is
// the sum of χ over v and its ancestors). Then ‖χ‖₁ = Σ_v |g(v) −
// g(parent v)| is the total variation of g over the tree's edges. For
// D ∈ {0, 1}^N, clamping an integer g to [0, 1] changes neither the
// leaves nor the virtual parent and does not increase any |g(v) −
// g(parent v)| (the coarea formula gives the same for real g), so an
// optimal g takes values in {0, 1}: the least ‖χ‖₁ is the least number
// of edges cut between the leaves labelled 1 and those labelled 0 with
// the virtual parent. Leaves beyond N are free, which only lowers the
// cost.
//
//   - Replace-one (n public): moving one instance from bin a to bin b
//     changes the prefixes [min(a,b), max(a,b) − 1] by ±1, an interval.
//     Suffix lemma: for a subtree of height h whose leaves carry 1 on a
//     suffix and 0 elsewhere, let c0 (c1) be its least cut cost,
//     counting the edge above its root, when that root's parent is
//     labelled 0 (1); then c0 + c1 ≤ h + 1. By induction on h: a leaf
//     has c0 + c1 = 1; if the suffix starts in the right half (the left
//     child's subtree all 0), c0 = min(c0', 2 + c1') and
//     c1 = 1 + min(c0', c1') with (c0', c1') the right child's, and if
//     it starts in the left half (the right all 1), c0 = 1 + min(c0', c1')
//     and c1 = min(2 + c0', c1') with the left child's; either way
//     c0 + c1 ≤ 1 + c0' + c1' ≤ h + 1. By mirror symmetry the same
//     holds for prefixes. An interval of at least two prefixes whose
//     ends first meet below node v at level m is a suffix of v's left
//     subtree (A0, A1) and a prefix of its right subtree (B0, B1), both
//     of height m − 1; labelling everything outside v's subtree 0, it
//     costs at most min(A0 + B0, 1 + A1 + B1) ≤ (1 + A0 + A1 + B0 + B1)/2
//     ≤ (1 + 2m)/2, so at most m ≤ L, an integer; a single prefix costs
//     1. Hence Δ = max(L, 1) (N = 1 has no move at all), and it is
//     tight: tree_test.go enumerates every move for N ≤ 2^8 and finds
//     the worst least ‖χ‖₁ exactly L. dp-ecdf Thm 3.1 (Lemma 1, Eq. 9)
//     proves L + 1 with a construction that reaches it for odd L, and
//     Eq. (2) uses Lap((L+1)/ε); Lap_Z(L/ε) is ε-DP as well, with
//     (L/(L+1))² of the variance.
//   - Add/remove: adding one instance in bin a adds 1 to the suffix of
//     prefixes [a, N], i.e. 1_{[a, 2^L]} on the released indices. Lemma 1
//     (χ⁺ with d = 0, b = a) writes it with ⌈(L+1)/2⌉ signed nodes: the
//     non-adjacent form of its length 2^L − a + 1 read from the right
//     end. So Δ = ⌈(L+1)/2⌉, not the L + 1 of "each instance lies in
//     L + 1 tree nodes", which holds for trees over bins, not for the
//     path sums over prefixes used here (dp-ecdf Thm 0.A.1 uses the same
//     bound for continual counting); the enumeration finds it tight.
//
// Noise. Each η_{j,l} is an exact discrete Laplace Lap_Z(b) (package
// noise), b = Unit·Δ/ε rounded up to an exactly sampled scale, so prefix
// i has variance exactly (L+1)·2r/(1−r)², r = e^{−1/b} — slightly below
// the continuous 2(L+1)b² (2(L+1)L²/ε² for counts under replace-one,
// Thm 3.1's 2(L+1)³/ε² with the tight Δ), by the relative amount
// 1/(12b²) + O(b^{−4}). All node noises of a release are drawn by
// NewRelease.
type tree struct {
	bins     int
	levels   int // L
	epsilon  float64
	relation Relation
	delta    int     // ℓ1 sensitivity Δ of one record, in node units
	scale    float64 // b ≥ Unit·Δ/ε
	offsets  []int   // offsets[l] is the index of node (1, l); offsets[L+1] = Nodes()
	node     *noise.DiscreteLaplace
}

// maxBins bounds N so that node indices and their offsets fit an int.
const maxBins = 1 << 48

// treeNoiseDomain separates the tree's node streams from other uses of
// a release seed (noise.Seed.Stream): the ASCII bytes "tree".
const treeNoiseDomain uint32 = 0x74726565

// newTree returns the tree mechanism for p.Bins prefixes at ε = p.Epsilon
// under p.Relation, with p.Unit integer units per record. It is pure
// ε-DP: p.Delta must be 0 or a valid δ in [0, 1) (it is not used); p.Name
// and p.K are not used. It returns an error wrapping ErrNoiseTooLarge if
// the prefix noise would exceed maxPrefixStdDev.
func newTree(p Params) (*tree, error) {
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
	t := &tree{
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
	t.scale = laplaceScale(p.unit(), big.NewRat(int64(t.delta), 1), ratOf(p.Epsilon))
	if err := checkNoise("tree", p, float64(levels+1)*2*t.scale*t.scale); err != nil {
		return nil, err
	}
	var err error
	if t.node, err = noise.NewDiscreteLaplace(t.scale); err != nil {
		return nil, fmt.Errorf("tree: epsilon %v with sensitivity %d: %w", p.Epsilon, t.delta, err)
	}
	return t, nil
}

// treeSensitivity is Δ, the largest ‖χ‖₁ the privacy proof needs to
// explain one change of a neighbour (see tree).
func treeSensitivity(levels int, r Relation) int {
	if r == AddRemove {
		return (levels + 2) / 2 // ⌈(L+1)/2⌉
	}
	return max(levels, 1)
}

// Name returns "tree".
func (t *tree) Name() string { return "tree" }

// Bins returns N.
func (t *tree) Bins() int { return t.bins }

// Epsilon returns ε: the release of all N prefixes is ε-DP under Relation.
func (t *tree) Epsilon() float64 { return t.epsilon }

// Delta returns 0: the tree mechanism is pure ε-DP.
func (t *tree) Delta() float64 { return 0 }

// Relation returns the neighbouring relation of the guarantee.
func (t *tree) Relation() Relation { return t.relation }

// Levels returns L = ⌈log2 N⌉; every prefix sums L + 1 node noises.
func (t *tree) Levels() int { return t.levels }

// Sensitivity returns Δ, the ℓ1 sensitivity of one record: max(L, 1)
// under replace-one, ⌈(L+1)/2⌉ under add/remove.
func (t *tree) Sensitivity() int { return t.delta }

// Scale returns b, the scale of each node's discrete Laplace noise: the
// least exactly sampled scale with b·ε ≥ Unit·Δ.
func (t *tree) Scale() float64 { return t.scale }

// NodeVariance returns the exact variance 2r/(1−r)², r = e^{−1/b}, of one
// node noise Lap_Z(b) (the continuous Lap(b) would have 2b²).
func (t *tree) NodeVariance() float64 { return t.node.Variance() }

// PrefixVariance returns (L+1)·NodeVariance(), the same for every prefix
// i: 2(L+1)L²/ε² for counts under replace-one (Thm 3.1's 2(L+1)³/ε²
// with the tight Δ = L), up to the discrete correction (see tree).
func (t *tree) PrefixVariance(i int) float64 { return t.MeanVariance() }

// MeanVariance returns (L+1)·NodeVariance().
func (t *tree) MeanVariance() float64 { return float64(t.levels+1) * t.NodeVariance() }

// Nodes returns Σ_{l=0..L} ⌈N/2^l⌉, the number of node noises.
func (t *tree) Nodes() int { return t.offsets[t.levels+1] }

// Terms appends the L + 1 nodes (j, l) = (⌈i/2^l⌉, l) of prefix i, each
// with coefficient 1, numbered offsets[l] + j − 1. It panics unless
// 1 ≤ i ≤ N, as an out-of-range index does.
func (t *tree) Terms(i int, dst []Term) []Term {
	t.checkPrefix(i)
	for l := 0; l <= t.levels; l++ {
		dst = append(dst, Term{Node: t.nodeIndex(i, l), Coef: 1})
	}
	return dst
}

// nodeIndex numbers node (⌈i/2^l⌉, l) level by level.
func (t *tree) nodeIndex(i, l int) int { return t.offsets[l] + (i-1)>>l }

func (t *tree) checkPrefix(i int) {
	if i < 1 || i > t.bins {
		panic(fmt.Sprintf("tree: prefix %d out of range [1, %d]", i, t.bins))
	}
}

// NewRelease draws all Nodes() node noises of a release: η_{j,l} from
// noise.Seed(seed).Stream(domain "tree", node index).
func (t *tree) NewRelease(seed [32]byte) Release { return t.release(seed, true) }

func (t *tree) release(seed [32]byte, fixed bool) Release {
	return &treeRelease{tree: t, nodes: drawNodes(seed, treeNoiseDomain, t.Nodes(), identity, func(int) sampler { return t.node }, fixed)}
}

// treeRelease holds every node noise of one release. It is read-only,
// hence safe for concurrent use.
type treeRelease struct {
	tree  *tree
	nodes []int64 // by node index
}

// PrefixNoise returns η(i) = Σ_{l=0..L} η_{⌈i/2^l⌉,l}. It panics unless
// 1 ≤ i ≤ N.
func (r *treeRelease) PrefixNoise(i int) int64 {
	r.tree.checkPrefix(i)
	var sum int64
	for l := 0; l <= r.tree.levels; l++ {
		sum += r.nodes[r.tree.nodeIndex(i, l)]
	}
	return sum
}
