package hierarchy

import (
	"errors"
	"fmt"
)

// maxBins bounds the grid of a Tree, as package mechanism bounds its own.
const maxBins = 1 << 40

// ErrInvalid is matched (errors.Is) by every error of this package that
// rejects its arguments: a tree shape, a privacy parameter, a histogram.
var ErrInvalid = errors.New("invalid argument")

// Tree is the b-ary tree over a grid of N bins: level 0 is the root (all
// bins), level Depth−1 the leaves (one bin each), and node j of level ℓ
// covers bins [j·w_ℓ, min((j+1)·w_ℓ, N)) with w_ℓ = b^(Depth−1−ℓ). Nodes
// that would lie wholly beyond bin N are absent, so level ℓ has ⌈N/w_ℓ⌉
// nodes. Depth is the paper's d, the number of nodes on a root-to-leaf
// path (1 + ⌈log_b N⌉).
type Tree struct {
	bins, arity, depth int
	width              []int // width[ℓ] = w_ℓ
}

// NewTree returns the arity-ary tree over bins bins (arity ≥ 2,
// 1 ≤ bins ≤ 2^40).
func NewTree(bins, arity int) (Tree, error) {
	if arity < 2 || arity > 1<<20 {
		return Tree{}, fmt.Errorf("hierarchy: arity %d: must be between 2 and 2^20: %w", arity, ErrInvalid)
	}
	if bins < 1 || bins > maxBins {
		return Tree{}, fmt.Errorf("hierarchy: bins %d: must be between 1 and 2^40: %w", bins, ErrInvalid)
	}
	t := Tree{bins: bins, arity: arity}
	w := []int{1}
	for w[len(w)-1] < bins {
		w = append(w, w[len(w)-1]*arity)
	}
	t.depth = len(w)
	t.width = make([]int, t.depth)
	for l := range t.depth {
		t.width[l] = w[t.depth-1-l]
	}
	return t, nil
}

// Bins returns N.
func (t Tree) Bins() int { return t.bins }

// Arity returns b.
func (t Tree) Arity() int { return t.arity }

// Depth returns d, the number of levels.
func (t Tree) Depth() int { return t.depth }

// Width returns the number of bins a full node of level l covers.
func (t Tree) Width(l int) int { return t.width[l] }

// LevelNodes returns the number of nodes of level l.
func (t Tree) LevelNodes(l int) int { return (t.bins + t.width[l] - 1) / t.width[l] }

// Nodes returns the number of nodes of the tree.
func (t Tree) Nodes() int {
	s := 0
	for l := range t.depth {
		s += t.LevelNodes(l)
	}
	return s
}

// Range returns the bins [lo, hi) (0-based) of node j of level l.
func (t Tree) Range(l, j int) (lo, hi int) {
	lo = j * t.width[l]
	return lo, min(lo+t.width[l], t.bins)
}

// Counts returns the node counts of hist (one count per bin, N of them):
// Counts(hist)[l][j] is the sum of hist over node j of level l.
func (t Tree) Counts(hist []int64) ([][]int64, error) {
	if len(hist) != t.bins {
		return nil, fmt.Errorf("hierarchy: histogram of %d bins for a tree over %d: %w", len(hist), t.bins, ErrInvalid)
	}
	counts := make([][]int64, t.depth)
	leaves := make([]int64, len(hist))
	for i, c := range hist {
		if c < 0 {
			return nil, fmt.Errorf("hierarchy: bin %d has negative count %d: %w", i+1, c, ErrInvalid)
		}
		leaves[i] = c
	}
	counts[t.depth-1] = leaves
	for l := t.depth - 2; l >= 0; l-- {
		row := make([]int64, t.LevelNodes(l))
		for j, c := range counts[l+1] {
			row[j/t.arity] += c
		}
		counts[l] = row
	}
	return counts, nil
}
