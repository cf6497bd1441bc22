package hierarchy

import (
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// NodeMechanism releases every node count of a tree under a stated
// guarantee: CountingOnTrees, or a prefix mechanism read through its
// prefix differences (FromPrefixes).
type NodeMechanism interface {
	Name() string
	Tree() Tree
	Epsilon() float64
	Delta() float64
	Relation() mechanism.Relation
	// Release returns the released node counts of hist, in Counts'
	// layout; equal seeds and data give equal releases.
	Release(hist []int64, seed noise.Seed) ([][]int64, error)
	// PredictedMRMSE is the largest α-mRMSE over the nodes that the
	// public parameters predict for the worst data set.
	PredictedMRMSE(alpha float64) float64
}

// ArityOf is the arity of m's own tree: its Arity() when it has one (the
// k-ary tree), else 2 (the binary trees of tree, gaussian-tree, cascade).
func ArityOf(m mechanism.Mechanism) int {
	if a, ok := m.(interface{ Arity() int }); ok && a.Arity() >= 2 {
		return a.Arity()
	}
	return 2
}

// FromPrefixes returns the node counts of t read from releases of the
// prefix mechanism m over the same bins: node [lo, hi) is released as
// prefix hi minus prefix lo, a post-processing of one release of m, so
// with m's guarantee.
func FromPrefixes(m mechanism.Mechanism, t Tree) (NodeMechanism, error) {
	if m.Bins() != t.Bins() {
		return nil, fmt.Errorf("hierarchy: mechanism %s over %d bins for a tree over %d: %w", m.Name(), m.Bins(), t.Bins(), ErrInvalid)
	}
	return prefixNodes{m: m, t: t}, nil
}

type prefixNodes struct {
	m mechanism.Mechanism
	t Tree
}

func (p prefixNodes) Name() string                   { return p.m.Name() }
func (p prefixNodes) Tree() Tree                     { return p.t }
func (p prefixNodes) Epsilon() float64               { return p.m.Epsilon() }
func (p prefixNodes) Delta() float64                 { return p.m.Delta() }
func (p prefixNodes) Relation() mechanism.Relation   { return p.m.Relation() }
func (p prefixNodes) Mechanism() mechanism.Mechanism { return p.m }

func (p prefixNodes) Release(hist []int64, seed noise.Seed) ([][]int64, error) {
	counts, err := p.t.Counts(hist)
	if err != nil {
		return nil, err
	}
	rel := p.m.NewRelease(seed)
	at := func(i int) int64 {
		if i == 0 {
			return 0
		}
		return rel.PrefixNoise(i)
	}
	for l := range counts {
		for j := range counts[l] {
			lo, hi := p.t.Range(l, j)
			counts[l][j] += at(hi) - at(lo)
		}
	}
	return counts, nil
}

// PredictedMRMSE is √ of the largest variance of a node's noise, the
// α-mRMSE at a node of count 0 (the worst: the noise does not depend on
// the data), from m's Terms (RangeVariance).
func (p prefixNodes) PredictedMRMSE(float64) float64 {
	v := 0.0
	for l := range p.t.Depth() {
		for j := range p.t.LevelNodes(l) {
			lo, hi := p.t.Range(l, j)
			v = max(v, RangeVariance(p.m, lo, hi))
		}
	}
	return math.Sqrt(v)
}

// RangeVariance is the variance of the noise of prefix hi minus prefix
// lo (0 ≤ lo < hi ≤ N, prefix 0 being 0) of a release of m, from its
// Terms: NodeVariance·Σ_v (coefficient of η_v)². It is exact when the
// Terms describe m's noise exactly (all but cascade, whose rounding they
// omit).
func RangeVariance(m mechanism.Mechanism, lo, hi int) float64 {
	coef := map[int]float64{}
	for _, tm := range m.Terms(hi, nil) {
		coef[tm.Node] += tm.Coef
	}
	if lo > 0 {
		for _, tm := range m.Terms(lo, nil) {
			coef[tm.Node] -= tm.Coef
		}
	}
	v := 0.0
	for _, c := range coef {
		v += c * c
	}
	return v * m.NodeVariance()
}

// compile-time checks
var (
	_ NodeMechanism = (*CountingOnTrees)(nil)
	_ NodeMechanism = prefixNodes{}
)
