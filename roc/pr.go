package roc

// PR is a precision–recall curve: at each kept threshold τ_i, recall
// TP/(TP+FN) = TPR(τ_i) and precision TP/(TP+FP).
type PR struct {
	// Threshold[k] is the grid index i of point k (as in Curve).
	Threshold []int
	Recall    []float64
	Precision []float64
}

// PR returns the precision–recall curve of c. The counts are
// TP_i = Positives·TPR_i and FP_i = Negatives·FPR_i, from the same
// released totals and smoothed rates as the ROC curve (post-processing,
// no further budget).
//
// Precision is a ratio of two noisy counts and is meaningless where the
// predicted-positive count TP+FP is below one instance: at the top
// thresholds it is 0/0 for the exact curve, and noise of a fraction of an
// instance would make it swing across [0, 1]. Such thresholds are left
// out, so the curve starts at the highest threshold predicting at least
// minPredicted instances positive (minPredicted ≤ 0 means 1). Recall is
// non-increasing along the curve and both coordinates lie in [0, 1] when
// c is monotone; precision itself need not be monotone (nor is it for
// exact data).
func (c *Curve) PR(minPredicted float64) *PR {
	if minPredicted <= 0 {
		minPredicted = 1
	}
	pr := &PR{}
	for i := range c.TPR {
		tp, fp := c.Positives*c.TPR[i], c.Negatives*c.FPR[i]
		if tp+fp < minPredicted {
			continue
		}
		pr.Threshold = append(pr.Threshold, i)
		pr.Recall = append(pr.Recall, c.TPR[i])
		pr.Precision = append(pr.Precision, tp/(tp+fp))
	}
	return pr
}

// AveragePrecision returns Σ_k (R_k − R_{k+1})·P_k over the kept points
// in threshold order, with R = 0 after the last: the step-wise area
// under the PR curve (scikit-learn's average_precision_score on the
// same thresholds).
func (p *PR) AveragePrecision() float64 {
	var ap float64
	for k := range p.Recall {
		next := 0.0
		if k+1 < len(p.Recall) {
			next = p.Recall[k+1]
		}
		ap += (p.Recall[k] - next) * p.Precision[k]
	}
	return ap
}
