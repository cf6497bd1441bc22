package simulate

import (
	"math"
	"sort"
)

// ROC is a ROC curve: the false and true positive rates of the rule
// "positive iff score > τ_i" at each queried threshold, from the highest
// threshold down (so FPR and TPR rise), starting at (0, 0) and ending at
// (1, 1).
type ROC struct {
	FPR []float64 `json:"fpr"`
	TPR []float64 `json:"tpr"`
}

// PR is a precision–recall curve at the same thresholds as the ROC.
type PR struct {
	Recall    []float64 `json:"recall"`
	Precision []float64 `json:"precision"`
}

// rocFromPrefixes builds the ROC and PR curves from the prefix counts of
// positives pos[j] = #{y = 1, score ≤ τ_j} and negatives neg[j] at the
// queried thresholds (the last one the grid's maximum, so pos[last] and
// neg[last] are the totals). Exact or private counts alike: private ones
// are pure post-processing of the two released vectors (dp-ecdf §5.1).
func rocFromPrefixes(pos, neg []float64) (ROC, PR) {
	last := len(pos) - 1
	np, nn := pos[last], neg[last]
	r := ROC{FPR: []float64{0}, TPR: []float64{0}}
	var pr PR
	for j := last - 1; j >= -1; j-- {
		tp, fp := np, nn // every instance above the threshold below the first
		if j >= 0 {
			tp, fp = np-pos[j], nn-neg[j]
		}
		r.FPR = append(r.FPR, fp/nn)
		r.TPR = append(r.TPR, tp/np)
		if tp+fp > 0 {
			pr.Recall = append(pr.Recall, tp/np)
			pr.Precision = append(pr.Precision, tp/(tp+fp))
		}
	}
	return r, pr
}

// AUC is the trapezoidal area under the curve (exact for the ROC of
// binned scores, ties counted one half).
func (r ROC) AUC() float64 {
	var a float64
	for j := 1; j < len(r.FPR); j++ {
		a += (r.FPR[j] - r.FPR[j-1]) * (r.TPR[j] + r.TPR[j-1]) / 2
	}
	return a
}

// areaBetween is ∫₀¹ |a(f) − b(f)| df, the area of the symmetric
// difference of the regions under two ROC curves (dp-ecdf §6.5), with
// each curve linearly interpolated in FPR; it evaluates both on a
// uniform grid of 2000 FPR values. The curves must have non-decreasing
// FPR (smoothed or exact).
func areaBetween(a, b ROC) float64 {
	const steps = 2000
	var s float64
	for k := range steps {
		f := (float64(k) + 0.5) / steps
		s += math.Abs(a.at(f) - b.at(f))
	}
	return s / steps
}

// at returns the TPR of r at false positive rate f (the highest TPR
// among points with FPR = f, linear in between).
func (r ROC) at(f float64) float64 {
	j := sort.Search(len(r.FPR), func(j int) bool { return r.FPR[j] > f })
	if j == 0 {
		return r.TPR[0]
	}
	if j == len(r.FPR) {
		return r.TPR[len(r.TPR)-1]
	}
	f0, f1 := r.FPR[j-1], r.FPR[j]
	return r.TPR[j-1] + (r.TPR[j]-r.TPR[j-1])*(f-f0)/(f1-f0)
}
