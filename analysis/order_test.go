package analysis

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
)

// TestInOrderSklearn checks scikit-learn's order: fpr and tpr ascend
// from (0, 0) to (1, 1) with thresholds descending, the PR points end in
// (recall 0, precision 1), scikit-learn's average precision
// −Σ_k (R_{k+1} − R_k)·P_k of the reordered arrays is the result's,
// the original is unchanged, and an unknown order is refused.
func TestInOrderSklearn(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 25))
	const bins, n = 16, 400
	rel := testRelease(t, []core.Component{core.Label, core.NotLabel}, bins, n, 4)
	pos, neg := prefixSums(120, bins, 1.2, rng), prefixSums(n-120, bins, 0, rng)
	r, err := NewROC(noisyResult(rel, core.Label, pos, rng), noisyResult(rel, core.NotLabel, neg, rng), "l2", 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ecdf.NewLinearGrid(0, 1, bins)
	if err != nil {
		t.Fatal(err)
	}
	r.SetThresholds(g)
	before := slices.Clone(r.FPR)
	s, err := r.InOrder(OrderSklearn)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.FPR, before) || r.Order != "" {
		t.Fatal("InOrder changed its receiver")
	}
	if s.Order != OrderSklearn {
		t.Errorf("order %q, want %q", s.Order, OrderSklearn)
	}
	for name, c := range map[string]Curve{"curve": s.Curve, "raw": s.Raw, "interpolated": s.Interpolated} {
		k := len(c.FPR) - 1
		if c.FPR[0] != 0 || c.TPR[0] != 0 || c.FPR[k] != 1 || c.TPR[k] != 1 {
			t.Errorf("%s: ends (%v, %v) and (%v, %v), want (0, 0) and (1, 1)", name, c.FPR[0], c.TPR[0], c.FPR[k], c.TPR[k])
		}
		m := len(c.Recall) - 1
		if c.Recall[m] != 0 || c.Precision[m] != 1 {
			t.Errorf("%s: last PR point (%v, %v), want (0, 1)", name, c.Recall[m], c.Precision[m])
		}
		var ap float64
		for k := range m {
			ap -= (c.Recall[k+1] - c.Recall[k]) * c.Precision[k]
		}
		if d := ap - c.AveragePrecision; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: sklearn's average precision of the arrays %v, result's %v", name, ap, c.AveragePrecision)
		}
	}
	if !slices.IsSorted(s.FPR) || !slices.IsSorted(s.TPR) {
		t.Errorf("smoothed fpr %v, tpr %v: want ascending", s.FPR, s.TPR)
	}
	if len(s.Thresholds) != len(s.FPR) || !slices.IsSortedFunc(s.Thresholds, func(a, b float64) int { return cmp.Compare(b, a) }) {
		t.Errorf("thresholds %v: want one per point, descending", s.Thresholds)
	}
	if s.TPRAt(0.3) != r.TPRAt(0.3) {
		t.Errorf("TPR at 0.3: %v in sklearn's order, %v in the threshold order", s.TPRAt(0.3), r.TPRAt(0.3))
	}
	if same, err := r.InOrder(OrderThreshold); err != nil || same != r {
		t.Errorf("InOrder(%q) = %p, %v: want r itself", OrderThreshold, same, err)
	}
	if _, err := r.InOrder("pROC"); err == nil {
		t.Error("order pROC accepted")
	}
}
