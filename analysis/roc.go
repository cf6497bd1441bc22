package analysis

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/roc"
)

// Curve is one ROC curve and the PR curve derived from it (JSON schema in
// docs/json.md). Index 0 is the threshold below the grid (FPR = TPR = 1),
// the last the top of the grid (FPR = TPR = 0); a higher score means
// more likely positive.
type Curve struct {
	FPR []float64 `json:"fpr"`
	TPR []float64 `json:"tpr"`
	AUC float64   `json:"auc"`
	// Recall and Precision are the PR points that predict at least one
	// instance positive (roc.Curve.PR); AveragePrecision summarises them.
	Recall           []float64 `json:"recall"`
	Precision        []float64 `json:"precision"`
	AveragePrecision float64   `json:"average_precision"`

	curve *roc.Curve
}

// NewCurve returns the ROC and PR curves of c.
func NewCurve(c *roc.Curve) Curve {
	pr := c.PR(1)
	return Curve{FPR: c.FPR, TPR: c.TPR, AUC: c.AUC(), Recall: pr.Recall, Precision: pr.Precision, AveragePrecision: pr.AveragePrecision(), curve: c}
}

// TPRAt returns the curve's TPR at false positive rate x
// (roc.Curve.TPRAt: the top of a vertical step).
func (c Curve) TPRAt(x float64) float64 { return c.curve.TPRAt(x) }

// ROC is a private ROC curve (with its PR curve) from one release of the
// {Label, NotLabel} pair. Every field is public configuration or
// post-processing of the release.
type ROC struct {
	// Release's n is P̂(N) + M̂(N) under add/remove; the curves are
	// normalised by each vector's own released total either way.
	Privacy
	Smoothing string `json:"smoothing"`
	// Curve is the smoothed private curve (the raw one for smoothing
	// none): fpr, tpr, auc, recall, precision, average_precision.
	Curve
	// Raw is the unsmoothed private curve; it may cross itself.
	Raw Curve `json:"raw"`
	// AUCCI95 is a 95 % interval for the data set's own binned AUC given
	// the DP noise, AUCCI95Population one for the population AUC adding
	// the sampling variance (rocIntervals); both about Curve.AUC, absent
	// when built with no interval draws.
	AUCCI95           *[2]float64 `json:"auc_ci95,omitempty"`
	AUCCI95Population *[2]float64 `json:"auc_ci95_population,omitempty"`
	// Band95 is the pointwise 95 % band of the data set's ROC curve on
	// an FPR grid (rocIntervals), from the same bootstrap; absent
	// without interval draws.
	Band95 *ROCBand `json:"band95,omitempty"`
	// Notes say what post-processing changed, e.g. a class total raised
	// to 1 (ClampTotals).
	Notes []string `json:"notes,omitempty"`
}

// ClampTotals is the one rule for noisy class totals: a released total
// (the last prefix) of the positives or the negatives below one instance
// is raised to 1, so that the rates stay defined when noise drives a
// small class's count to 0 or below. Post-processing of the release,
// free under DP. It returns a note for each total it raised.
func ClampTotals(pos, neg []float64) []string {
	var notes []string
	for _, v := range []struct {
		class  string
		prefix []float64
	}{{"positives", pos}, {"negatives", neg}} {
		last := len(v.prefix) - 1
		if t := v.prefix[last]; t < 1 {
			v.prefix[last] = 1
			notes = append(notes, fmt.Sprintf("the released number of %s %.4g is below one instance and was raised to 1 (post-processing; too few of them for this ε)", v.class, t))
		}
	}
	return notes
}

// NewROC builds the ROC result from the released prefix sums of the
// positives (Label) and negatives (NotLabel) of one release, read at the
// same prefixes, the last of which is N: the class totals are clamped
// (ClampTotals), each vector's ECDF is smoothed by method (over the
// release's noise pattern for tree-l2), and the raw and smoothed curves
// are computed by package roc, with the intervals from draws Monte-Carlo
// draws of the noise law (DefaultIntervalDraws; 0: none).
func NewROC(pos, neg *aggregation.Result, method string, draws int) (*ROC, error) {
	method, err := CheckSmoothing(method, len(pos.Prefixes), pos.Release.Spec.Mechanism.Bins)
	if err != nil {
		return nil, err
	}
	if pos.Release != neg.Release || pos.Component != aggregation.Label || neg.Component != aggregation.NotLabel {
		return nil, fmt.Errorf("analysis: a ROC curve needs the Label and NotLabel sums of one release")
	}
	n, err := pos.Release.Normaliser(lastSum(pos) + lastSum(neg))
	if err != nil {
		return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
	}
	p, m := values(pos), values(neg)
	r := &ROC{Privacy: describe(pos.Release, aggregation.Label, n), Smoothing: method, Notes: ClampTotals(p, m)}
	raw, err := roc.FromPrefixes(p, m, nil)
	if err != nil {
		return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
	}
	smoothed, err := roc.FromPrefixes(p, m, smoother(method, pos.Release.Mechanism(aggregation.Label)))
	if err != nil {
		return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
	}
	r.Raw, r.Curve = NewCurve(raw), NewCurve(smoothed)
	if draws > 0 {
		own, pop, band, err := rocIntervals(pos, neg, p, m, method, smoothed, draws)
		if err != nil {
			return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
		}
		r.AUCCI95, r.AUCCI95Population, r.Band95 = &own, &pop, band
	}
	return r, nil
}

// QueryROC reads the positives and negatives of the ROC release rel at
// prefixes (AllPrefixes for the whole curve) through u and returns
// NewROC of them with draws interval draws. Reading a release again
// costs no budget.
func QueryROC(ctx context.Context, u aggregation.UStat, rel *aggregation.Release, prefixes []int, method string, draws int) (*ROC, error) {
	var res [2]*aggregation.Result
	for k, c := range []aggregation.Component{aggregation.Label, aggregation.NotLabel} {
		var err error
		if res[k], err = u.Sum(ctx, aggregation.Query{Release: rel, Component: c, Prefixes: prefixes}); err != nil {
			return nil, err
		}
	}
	return NewROC(res[0], res[1], method, draws)
}

// TrueROC is the exact ROC curve of instances with 1-based bins and 0/1
// labels on a grid of nBins bins, at the thresholds of prefixes (the
// last of which is N).
func TrueROC(bins, labels []int, nBins int, prefixes []int) (Curve, error) {
	pos, neg, err := roc.ExactPrefixes(bins, labels, nBins)
	if err != nil {
		return Curve{}, err
	}
	p, m := make([]float64, len(prefixes)), make([]float64, len(prefixes))
	for j, i := range prefixes {
		p[j], m[j] = pos[i-1], neg[i-1]
	}
	c, err := roc.FromPrefixes(p, m, nil)
	if err != nil {
		return Curve{}, fmt.Errorf("analysis: true ROC curve: %w", err)
	}
	return NewCurve(c), nil
}

// AreaError returns the area between the true curve and the private one
// (the smoothed curve, or the raw one under smoothing none),
// ∫|ROC − ROĈ| dFPR (roc.AreaError, dp-ecdf §6.5). A raw curve that is
// not monotone may cross itself; its area is measured along its polyline
// (roc.PathAreaError), which is the same integral for a monotone curve.
func (r *ROC) AreaError(truth Curve) (float64, error) {
	if !r.curve.Monotone() {
		return roc.PathAreaError(truth.curve, r.curve)
	}
	return roc.AreaError(truth.curve, r.curve)
}
