package hierarchy

import (
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// CountingOnTrees is the (ε,δ)-DP release of every node count of a b-ary
// tree of counting-on-trees Theorem 4.1 (Algorithms 1–4): a private
// upper bound U of the root count, geometric thresholds τ_i = ⌈U/ρ^i⌉,
// and in each round the classification of every remaining subtree's
// nodes as above or below τ_i by the sparse vector technique over the
// levels (bottom-up) with truncated Laplace estimates of the candidate
// transition nodes. See the package documentation for the algorithm and
// its privacy proof.
type CountingOnTrees struct {
	p     Params
	tree  Tree
	root  truncatedLaplace
	kappa float64 // κ, the margin-to-threshold ratio of the schedule
	space float64 // s, the thresholds' spacing ρ = (1+sα)/(1−sα)
}

// kappas are the candidate values of κ, in units of α, and spacings the
// candidate values of s: NewCountingOnTrees keeps the pair whose
// PredictedMRMSE is least (a function of the public parameters only).
var (
	kappas   = []float64{0.125, 0.25, 0.5, 1, 2}
	spacings = []float64{1, 0.75, 0.5}
)

// cotDomain separates the noise stream of a CountingOnTrees release
// from the prefix mechanisms' streams of the same seed ("cott").
const cotDomain uint32 = 0x636f7474

// cotVersion is the stream index of a release, the version of the seed →
// release derivation: 1 since the schedule's spacing s joined κ (0 before).
// Any change to the schedule or the draws' order bumps it.
const cotVersion uint64 = 1

// NewCountingOnTrees validates p: a tree NewTree accepts, ε > 0 finite,
// 0 < δ < 1, 0 < α < 1 and a known relation. Errors match ErrInvalid.
func NewCountingOnTrees(p Params) (*CountingOnTrees, error) {
	t, err := NewTree(p.Bins, p.Arity)
	if err != nil {
		return nil, err
	}
	switch {
	case !(p.Epsilon > 0) || math.IsInf(p.Epsilon, 0):
		return nil, fmt.Errorf("hierarchy: counting-on-trees: epsilon %v: must be positive and finite: %w", p.Epsilon, ErrInvalid)
	case !(p.Delta > 0 && p.Delta < 1):
		return nil, fmt.Errorf("hierarchy: counting-on-trees: delta %v: must be in (0, 1), the algorithm is (ε,δ)-DP: %w", p.Delta, ErrInvalid)
	case !(p.Alpha > 0 && p.Alpha < 1):
		return nil, fmt.Errorf("hierarchy: counting-on-trees: alpha %v: must be in (0, 1): %w", p.Alpha, ErrInvalid)
	case p.Relation != mechanism.ReplaceOne && p.Relation != mechanism.AddRemove:
		return nil, fmt.Errorf("hierarchy: counting-on-trees: unknown relation %v: %w", p.Relation, ErrInvalid)
	}
	epsU, deltaU := unitBudget(p)
	root, err := newTruncatedLaplace(epsU*rootShare, deltaU*rootShare)
	if err != nil {
		return nil, err
	}
	var best *CountingOnTrees
	least := math.Inf(1)
	for _, s := range spacings {
		for _, k := range kappas {
			c := &CountingOnTrees{p: p, tree: t, root: root, kappa: k * p.Alpha, space: s}
			if e := c.PredictedMRMSE(p.Alpha); best == nil || e < least {
				best, least = c, e
			}
		}
	}
	return best, nil
}

// Name returns "counting-on-trees(α=…,b=…)".
func (c *CountingOnTrees) Name() string {
	return fmt.Sprintf("counting-on-trees(α=%g,b=%d)", c.p.Alpha, c.p.Arity)
}

// Tree returns the tree whose node counts are released.
func (c *CountingOnTrees) Tree() Tree { return c.tree }

// Epsilon, Delta and Relation state the guarantee of one release.
func (c *CountingOnTrees) Epsilon() float64 { return c.p.Epsilon }

// Delta returns δ.
func (c *CountingOnTrees) Delta() float64 { return c.p.Delta }

// Relation returns the neighbouring relation of the guarantee.
func (c *CountingOnTrees) Relation() mechanism.Relation { return c.p.Relation }

// Release returns the released node counts of hist (Counts' layout).
// All randomness is read, in
// an order fixed by the outputs so far, from the one stream
// seed.Stream(cotDomain, cotVersion): equal seeds and data give equal releases.
func (c *CountingOnTrees) Release(hist []int64, seed noise.Seed) ([][]int64, error) {
	counts, err := c.tree.Counts(hist)
	if err != nil {
		return nil, err
	}
	out := make([][]int64, len(counts))
	for l := range out {
		out[l] = make([]int64, len(counts[l]))
	}
	src := seed.Stream(cotDomain, cotVersion)
	// Algorithm 4, Line 2: U ≥ w_root always, the noise being ≥ −A.
	u := counts[0][0] + c.root.sampleFixed(src) + c.root.limit
	if u <= 0 {
		return out, nil // w_root ≤ U ≤ 0: every count is 0
	}
	rounds, err := schedule(c.p, c.tree.Depth(), u, c.kappa, c.space)
	if err != nil {
		return nil, err
	}
	r := releaser{tree: c.tree, counts: counts, out: out, src: src, mark: make([][]int32, len(counts))}
	for l := range r.mark {
		r.mark[l] = make([]int32, len(counts[l]))
	}
	forest := []node{{0, 0}}
	for i := range rounds {
		var next []node
		for _, root := range forest {
			r.classify(root, &rounds[i], int32(i+1))
			next = r.assign(root, &rounds[i], int32(i+1), next)
		}
		forest = next
	}
	return out, nil
}

// predictionRoot is the root bound U at which PredictedMRMSE evaluates
// the schedule: a public stand-in for the data's size (the lowest rounds,
// which set the prediction, hardly depend on U).
const predictionRoot = 1 << 20

// PredictedMRMSE is the largest α-mRMSE over the nodes that the schedule
// for U = 2^20 guarantees when no round fails (probability ≥ 1 − β): a
// node marked in round i lies in [L_i, H_{i−1}], so its error is at most
// ((1−α)·H_{i−1} − (1+α)·L_i)/2 after the slack; a node never marked has
// count ≤ H_m and is released as 0, error ≤ (1−α)·H_m. The α argument is
// the one of the release's Params (the schedule is spaced for it); other
// values are evaluated at that schedule.
func (c *CountingOnTrees) PredictedMRMSE(alpha float64) float64 {
	rounds, err := schedule(c.p, c.tree.Depth(), predictionRoot, c.kappa, c.space)
	if err != nil {
		return math.Inf(1)
	}
	worst := 0.0
	for _, r := range rounds {
		worst = max(worst, MultiplicativeError(alpha, float64(r.low), float64(r.est)),
			MultiplicativeError(alpha, float64(r.high), float64(r.est)))
	}
	last := rounds[len(rounds)-1]
	return max(worst, (1-alpha)*float64(last.tau+last.tlap.limit+2*last.margin))
}

// node is node j of level l.
type node struct{ l, j int }

// releaser is the state of one release.
type releaser struct {
	tree   Tree
	counts [][]int64
	out    [][]int64
	src    noise.Source
	mark   [][]int32 // round in which the node was found above its threshold
}

// span returns the nodes [lo, hi) of level l under root.
func (r *releaser) span(root node, l int) (lo, hi int) {
	w := r.tree.Width(root.l) / r.tree.Width(l)
	return root.j * w, min((root.j+1)*w, r.tree.LevelNodes(l))
}

// classify is Algorithm 1 on the subtree of root at threshold rd.tau: for
// each level from the deepest up, one sparse-vector query, the largest
// count of the level's uncovered nodes against τ + A + a; on ⊤, a
// truncated Laplace estimate of each of them, those reaching τ marked
// (transition nodes) with their ancestors; after c ⊤ answers, ⊥ for the
// rest. Marks are stamped with the round.
func (r *releaser) classify(root node, rd *round, stamp int32) {
	rho := drawNoise(rd.thresh, r.src)
	tops := 0
	for l := r.tree.Depth() - 1; l >= root.l && tops < rd.cutoff; l-- {
		lo, hi := r.span(root, l)
		q, any := int64(0), false
		for j := lo; j < hi; j++ {
			if r.mark[l][j] != stamp {
				q, any = max(q, r.counts[l][j]), true
			}
		}
		if !any {
			return // every node of the level is covered, and so all above
		}
		if !rd.above(q, rho, r.src) {
			continue // ⊥
		}
		for j := lo; j < hi; j++ {
			if r.mark[l][j] != stamp && r.counts[l][j]+rd.tlap.sampleFixed(r.src) >= rd.tau {
				r.cover(node{l, j}, root.l, stamp)
			}
		}
		tops++
		rho = drawNoise(rd.thresh, r.src)
	}
}

// cover marks v and its ancestors down to level top.
func (r *releaser) cover(v node, top int, stamp int32) {
	for ; v.l >= top && r.mark[v.l][v.j] != stamp; v = (node{v.l - 1, v.j / r.tree.Arity()}) {
		r.mark[v.l][v.j] = stamp
		if v.l == 0 {
			return
		}
	}
}

// assign gives the nodes of root's subtree marked in this round the
// round's estimate (Algorithm 2, Line 7) and appends to next the roots of
// the unmarked subtrees left (Line 6).
func (r *releaser) assign(root node, rd *round, stamp int32, next []node) []node {
	if r.mark[root.l][root.j] != stamp {
		return append(next, root)
	}
	stack := []node{root}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r.out[v.l][v.j] = rd.est
		if v.l == r.tree.Depth()-1 {
			continue
		}
		lo, hi := r.span(v, v.l+1)
		for j := lo; j < hi; j++ {
			if r.mark[v.l+1][j] == stamp {
				stack = append(stack, node{v.l + 1, j})
			} else {
				next = append(next, node{v.l + 1, j})
			}
		}
	}
	return next
}
