package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// TestLawMSE checks the suffix-sum evaluation of a pooled law against
// the brute-force mean of the multiplicative error of Definition 1.4
// (hierarchy.MRMSE at truth w, slack s = α·w), ties at s included.
func TestLawMSE(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	abs := make([]float64, 301)
	est := make([]float64, len(abs))
	for k := range abs {
		abs[k] = math.Floor(rng.ExpFloat64() * 20)
		est[k] = 100 + abs[k] // truth 100
	}
	l := newLaw(append([]float64(nil), abs...))
	for _, alpha := range []float64{0, 0.05, 0.1, 0.2, 0.5, 3} {
		want := hierarchy.MRMSE(alpha, 100, est)
		if got := math.Sqrt(l.mse(alpha * 100)); math.Abs(got-want) > 1e-9*max(want, 1) {
			t.Errorf("α=%v: %v, brute force %v", alpha, got, want)
		}
	}
	if got, want := l.meanAbs, hierarchy.SmoothedRelativeError(1, 100, est)*100; math.Abs(got-want) > 1e-9*want {
		t.Errorf("mean |η| %v, want %v", got, want)
	}
}

// TestLawKey checks that spans pooled under one key have the same exact
// noise variance, and that the pooling does merge spans.
func TestLawKey(t *testing.T) {
	for _, name := range []string{"tree", "kary", "gaussian-tree", "cascade"} {
		m, err := mechanism.New(mechanism.Params{Name: name, Bins: 64, Epsilon: 1, Delta: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		variance := map[string]float64{}
		for lo := 0; lo < 64; lo += 4 {
			s := span{lo: lo, hi: lo + 4}
			key := lawKey(m, s, name != "cascade")
			v := hierarchy.RangeVariance(m, s.lo, s.hi)
			if w, ok := variance[key]; ok && math.Abs(w-v) > 1e-9*v {
				t.Errorf("%s: key %q pools variances %v and %v", name, key, w, v)
			}
			variance[key] = v
		}
		if len(variance) >= 16 {
			t.Errorf("%s: %d keys for 16 spans: nothing pooled", name, len(variance))
		}
	}
}

// TestPooledLawsVariance checks RangeVariance of every node range against
// the uncapped pooled Monte-Carlo mean square of its law, within six
// standard errors (relative s.e. ≤ √(5/draws) for these laws): the cap
// of the α-mRMSE columns rests on it.
func TestPooledLawsVariance(t *testing.T) {
	for _, name := range []string{"tree", "kary", "gaussian-tree"} {
		m, err := mechanism.New(mechanism.Params{Name: name, Bins: 64, Epsilon: 1, Delta: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := hierarchy.NewTree(64, hierarchy.ArityOf(m))
		var spans []span
		var keys []string
		for l := range tr.Depth() {
			for j := range tr.LevelNodes(l) {
				lo, hi := tr.Range(l, j)
				spans = append(spans, span{lo: lo, hi: hi})
				keys = append(keys, lawKey(m, spans[len(spans)-1], true))
			}
		}
		laws := pooledLaws(m, spans, keys, 400, rand.New(rand.NewPCG(2, 2)))
		for k, s := range spans {
			l := laws[keys[k]]
			v := hierarchy.RangeVariance(m, s.lo, s.hi)
			if tol := 6 * math.Sqrt(5/float64(len(l.abs))); math.Abs(l.mse(0)/v-1) > tol {
				t.Errorf("%s [%d,%d): Monte-Carlo %v, RangeVariance %v", name, s.lo, s.hi, l.mse(0), v)
			}
		}
	}
}
