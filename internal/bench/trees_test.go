package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// TestTrees runs a small comparison: one row per mechanism and setting,
// each ratio taken to the best other row of its setting, and the
// Monte-Carlo α-mRMSE of a linear mechanism below its predicted worst
// case (an exact bound: α > 0 only forgives) up to the maximum's bias.
func TestTrees(t *testing.T) {
	cfg := TreesConfig{Shapes: [][2]int{{2, 5}, {4, 3}}, Epsilon: 1, Deltas: []float64{1e-6}, Alphas: []float64{0.1, 0.5},
		Relation: mechanism.AddRemove, Mechanisms: []string{"tree", "cascade", "counting-on-trees"}, Runs: 400,
		Data: func(bins int) ([]int64, string, error) {
			h, err := synthetic.PoissonHistogram(3, bins, 1)
			return h, "X_pois(3)", err
		}, Seed: 1}
	rows, err := Trees(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*2*3 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		set := rows[i/3*3 : i/3*3+3]
		best := math.Inf(1)
		for _, o := range set {
			if o.Mechanism != r.Mechanism {
				best = min(best, o.MRMSE)
			}
		}
		if r.BestBaseline != best || math.Abs(r.Ratio-r.MRMSE/best) > 1e-12 || r.Bins != int(math.Pow(float64(r.Arity), float64(r.Depth-1))) {
			t.Errorf("row %+v: best %v", r, best)
		}
		if !strings.HasPrefix(r.Mechanism, "counting-on-trees") && r.MRMSE > 1.1*r.Predicted {
			t.Errorf("%s: measured %v above the bound %v", r.Mechanism, r.MRMSE, r.Predicted)
		}
	}
	if _, err := Trees(TreesConfig{Runs: 0}, nil); err == nil {
		t.Error("0 runs accepted")
	}
}
