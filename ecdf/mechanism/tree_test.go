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
