package simulate

import (
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/roc"
)

// ROC is a ROC curve in the order of package roc: index 0 is the
// threshold below the grid (FPR = TPR = 1), the last index the top of the
// grid (FPR = TPR = 0); a higher score means more likely positive.
type ROC struct {
	FPR []float64 `json:"fpr"`
	TPR []float64 `json:"tpr"`
}

// PR is a precision–recall curve at the thresholds of the ROC curve that
// predict at least one instance positive (roc.Curve.PR).
type PR struct {
	Recall    []float64 `json:"recall"`
	Precision []float64 `json:"precision"`
}

func rocOf(c *roc.Curve) ROC { return ROC{FPR: c.FPR, TPR: c.TPR} }

func prOf(c *roc.Curve) PR {
	p := c.PR(1)
	return PR{Recall: p.Recall, Precision: p.Precision}
}

// rocReport builds the true, private and smoothed ROC and PR curves with
// package roc from the parties' exact positives/negatives and the
// released vectors at the queried prefixes, smoothing each vector's ECDF
// with method (over the release's own noise terms for tree-l2).
func rocReport(method string, parties []*party.Party, pos, neg *aggregation.Result) (ROCReport, PRReport, error) {
	var rr ROCReport
	var pr PRReport
	bins, labels := make([]int, len(parties)), make([]int, len(parties))
	for k, p := range parties {
		bins[k], labels[k] = p.Bin(), int(p.Payload(aggregation.Label))
	}
	exactPos, exactNeg, err := roc.ExactPrefixes(bins, labels, pos.Release.Spec.Mechanism.Bins)
	if err != nil {
		return rr, pr, err
	}
	truePos, trueNeg, privPos, privNeg := make([]float64, len(pos.Prefixes)), make([]float64, len(pos.Prefixes)), make([]float64, len(pos.Prefixes)), make([]float64, len(pos.Prefixes))
	for j, i := range pos.Prefixes {
		truePos[j], trueNeg[j] = exactPos[i-1], exactNeg[i-1]
		privPos[j], privNeg[j] = pos.Value(j), neg.Value(j)
	}
	clampTotal(privPos)
	clampTotal(privNeg)
	var smoother roc.Smoother // none: the smoothed curve is the raw one
	if method != "none" {
		m := pos.Release.Mechanism(aggregation.Label)
		smoother = func(f []float64) ([]float64, error) {
			return smooth.Apply(method, f, m)
		}
	}
	exact, err := roc.FromPrefixes(truePos, trueNeg, nil)
	if err != nil {
		return rr, pr, fmt.Errorf("true ROC curve: %w", err)
	}
	raw, err := roc.FromPrefixes(privPos, privNeg, nil)
	if err != nil {
		return rr, pr, fmt.Errorf("private ROC curve: %w", err)
	}
	smoothed, err := roc.FromPrefixes(privPos, privNeg, smoother)
	if err != nil {
		return rr, pr, fmt.Errorf("smoothed private ROC curve: %w", err)
	}
	rr = ROCReport{ROC: rocOf(raw), True: rocOf(exact), Smoothed: rocOf(smoothed), AUCTrue: exact.AUC(), AUCPrivate: raw.AUC(), AUCSmoothed: smoothed.AUC()}
	pr = PRReport{PR: prOf(raw), True: prOf(exact), Smoothed: prOf(smoothed)}
	if smoothed.Monotone() {
		rr.AreaError, err = roc.AreaError(exact, smoothed)
	} else {
		rr.AreaError, err = -1, nil // none: the raw curve may cross itself
	}
	return rr, pr, err
}

// clampTotal raises a released total (the last prefix) below one instance
// to 1, so that the rates stay defined when noise drives a small class's
// count to 0 or below: post-processing of the release, free under DP.
func clampTotal(prefix []float64) {
	last := len(prefix) - 1
	prefix[last] = max(prefix[last], 1)
}
