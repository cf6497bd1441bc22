package hierarchy

import (
	"errors"
	"testing"
)

// TestTreeCounts checks every node count of trees of several shapes
// against a brute-force sum over the node's bins, and that each level
// partitions the grid.
func TestTreeCounts(t *testing.T) {
	for _, c := range []struct{ bins, arity, depth int }{
		{1, 2, 1}, {2, 2, 2}, {5, 2, 4}, {8, 2, 4}, {9, 3, 3}, {10, 3, 4}, {37, 4, 4}, {64, 16, 3},
	} {
		tr, err := NewTree(c.bins, c.arity)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Depth() != c.depth {
			t.Errorf("N=%d b=%d: depth %d, want %d", c.bins, c.arity, tr.Depth(), c.depth)
		}
		hist := make([]int64, c.bins)
		for i := range hist {
			hist[i] = int64(i*i%7 + 1)
		}
		counts, err := tr.Counts(hist)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for l := range tr.Depth() {
			next := 0
			for j := range tr.LevelNodes(l) {
				lo, hi := tr.Range(l, j)
				if lo != next || hi <= lo {
					t.Fatalf("N=%d b=%d level %d node %d: range [%d,%d) after %d", c.bins, c.arity, l, j, lo, hi, next)
				}
				next = hi
				var want int64
				for i := lo; i < hi; i++ {
					want += hist[i]
				}
				if counts[l][j] != want {
					t.Errorf("N=%d b=%d level %d node %d: count %d, want %d", c.bins, c.arity, l, j, counts[l][j], want)
				}
			}
			if next != c.bins {
				t.Errorf("N=%d b=%d level %d ends at %d", c.bins, c.arity, l, next)
			}
			total += tr.LevelNodes(l)
		}
		if tr.LevelNodes(0) != 1 || tr.Nodes() != total {
			t.Errorf("N=%d b=%d: %d roots, %d nodes, want 1, %d", c.bins, c.arity, tr.LevelNodes(0), tr.Nodes(), total)
		}
	}
}

// TestTreeErrors checks that bad shapes and histograms are refused with
// ErrInvalid.
func TestTreeErrors(t *testing.T) {
	for _, c := range []struct{ bins, arity int }{{0, 2}, {4, 1}, {1 << 41, 2}} {
		if _, err := NewTree(c.bins, c.arity); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewTree(%d, %d): %v", c.bins, c.arity, err)
		}
	}
	tr, _ := NewTree(4, 2)
	for _, h := range [][]int64{{1, 2, 3}, {1, -1, 0, 0}} {
		if _, err := tr.Counts(h); !errors.Is(err, ErrInvalid) {
			t.Errorf("Counts(%v): %v", h, err)
		}
	}
}
