package analysis

import (
	"fmt"
	"slices"
)

// Orders of the arrays of a ROC result in JSON (ROC.Order, docs/json.md).
const (
	// OrderThreshold is fedecdf's order: by threshold from the bottom of
	// the grid, fpr and tpr from 1 down to 0, recall non-increasing.
	OrderThreshold = "threshold"
	// OrderSklearn is scikit-learn's: roc_curve's fpr and tpr ascending
	// from (0, 0) with thresholds descending, and precision_recall_curve's
	// points (already by ascending threshold) ending in its appended
	// point (recall 0, precision 1).
	OrderSklearn = "sklearn"
)

// Orders are the array orders ROC.InOrder accepts.
var Orders = []string{OrderThreshold, OrderSklearn}

// InOrder returns r with its arrays in order (one of Orders): r itself
// for OrderThreshold, else a copy whose Curve, Raw and Interpolated
// (Curve.Sklearn) and Thresholds are in scikit-learn's order and whose
// Order says so; r is not changed. The AUC, the average precision and
// every interval are the same in either order.
func (r *ROC) InOrder(order string) (*ROC, error) {
	switch order {
	case OrderThreshold, "":
		return r, nil
	case OrderSklearn:
		s := *r
		s.Curve, s.Raw, s.Interpolated = r.Curve.Sklearn(), r.Raw.Sklearn(), r.Interpolated.Sklearn()
		s.Thresholds = reversed(r.Thresholds)
		s.Order = OrderSklearn
		return &s, nil
	}
	return nil, fmt.Errorf("analysis: array order %q: want one of %v", order, Orders)
}

// Sklearn returns a copy of c in scikit-learn's order: fpr and tpr
// reversed, so that they ascend from (0, 0) as roc_curve's do (its first
// point, at threshold +∞, is fedecdf's last, at the top of the grid),
// and the PR points followed by precision_recall_curve's last point,
// recall 0 and precision 1, which adds nothing to the average
// precision. c is not changed, and the copy's methods (TPRAt,
// AreaError, Interpolated) answer as c's.
func (c Curve) Sklearn() Curve {
	s := c
	s.FPR, s.TPR = reversed(c.FPR), reversed(c.TPR)
	s.Recall = append(slices.Clone(c.Recall), 0)
	s.Precision = append(slices.Clone(c.Precision), 1)
	return s
}

// reversed returns a reversed copy of x (nil for nil).
func reversed(x []float64) []float64 {
	if x == nil {
		return nil
	}
	y := slices.Clone(x)
	slices.Reverse(y)
	return y
}
