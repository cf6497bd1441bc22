package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
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
	// Interpolated is Curve with ROCInterpolation − 1 points between
	// consecutive thresholds (roc.Curve.Interpolate, PCHIP): the estimate
	// of the unbinned curve, whose auc is the estimate of the unbinned
	// AUC (roc/doc.go, "The default estimator").
	Interpolated Curve `json:"interpolated"`
	// AUCCI95 is a 95 % interval for the data set's own binned AUC given
	// the DP noise, AUCCI95Population one for the population AUC adding
	// the sampling variance (rocIntervals); both about Curve.AUC, absent
	// when built with no interval draws.
	AUCCI95           *[2]float64 `json:"auc_ci95,omitempty"`
	AUCCI95Population *[2]float64 `json:"auc_ci95_population,omitempty"`
	// AveragePrecisionCI95 is a 95 % interval for the data set's own
	// binned average precision given the DP noise, from the box of the
	// counts (envelope.averagePrecision), or a bootstrap of the raw AP
	// where both class totals exceed 50 noise s.d. (apLinear); absent
	// when built with no interval draws.
	AveragePrecisionCI95 *[2]float64 `json:"average_precision_ci95,omitempty"`
	// Band95 is the simultaneous 95 % band of the data set's ROC curve on
	// an FPR grid (rocIntervals), from the same bootstrap; absent
	// without interval draws.
	Band95 *ROCBand `json:"band95,omitempty"`
	// IntervalMethod is how the intervals were built (rocIntervals):
	// "bootstrap", "box", or "noise-dominates" (the box, where a class
	// total is within 3 noise s.d. of zero); absent without intervals.
	IntervalMethod string `json:"interval_method,omitempty"`
	// AUCSamplingSE is the AUC's sampling s.e. behind AUCCI95Population
	// under the bootstrap method (DeLong's, with Hanley–McNeil's for
	// comparison); absent otherwise.
	AUCSamplingSE *SamplingSE `json:"auc_sampling_se,omitempty"`
	// NoiseDominates is set when the noise s.d. of a class total exceeds
	// a third of its released value (rocRegime): the curves and the AUC
	// then carry little information at this n·ε, the intervals are near
	// the whole range and Notes says so.
	NoiseDominates bool `json:"noise_dominates"`

	prefixes []int // the read prefixes of the curves' points 1…
	// Thresholds[i] is the score threshold of point i of fpr and tpr
	// (and of raw's): an instance counts as predicted positive at point
	// i when its bin lies above the i-th read prefix, i.e. its score
	// exceeds Thresholds[i] (the grid's τ at that prefix); point 0 counts
	// every instance and carries the grid's lower end. Absent until
	// SetThresholds.
	Thresholds []float64 `json:"thresholds,omitempty"`
	// Order is the order of the arrays: absent for fedecdf's threshold
	// order, "sklearn" for scikit-learn's (InOrder).
	Order string `json:"order,omitempty"`
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

// totalsFit is the generalised least-squares projection of the released
// pair onto the constraint P(N) + M(N) = n, which holds exactly when n
// is public (replace-one). With e the noise of both vectors (independent
// between the vectors, covariance Σ within each), and residual
// ρ = P̂(N) + M̂(N) − n, the GLS estimate under the linear constraint is
// ŷ − Σa(aᵀΣa)⁻¹ρ, a the indicator of the two prefixes N:
//
//	P̃(i) = P̂(i) − Cov(e_P(i), e_P(N))·ρ/(Var e_P(N) + Var e_M(N))
//
// and likewise M̃, so that P̃(N) + M̃(N) = n. Cov(e(i), e(N)) is
// (Var e(i) + Var e(N) − Var(e(N) − e(i)))/2 from the release's public
// range variances. It is the best linear unbiased estimate given the
// constraint (each class total's variance is halved when both vectors
// have the same noise) and post-processing of the release with public n:
// no privacy cost. Under add/remove n is not public and the fit is the
// identity.
type totalsFit struct {
	n      float64
	cp, cm []float64 // Cov(e(i_j), e(N)) / (Var e_P(N) + Var e_M(N))
}

// newTotalsFit returns the fit of the results pos and neg of one release
// read at the same prefixes, the last of which is N, with normaliser n;
// nil when n is not public.
func newTotalsFit(pos, neg *aggregation.Result, n ecdf.Normaliser) *totalsFit {
	if !n.Public {
		return nil
	}
	rel, last := pos.Release, pos.Prefixes[len(pos.Prefixes)-1]
	vp, vm := rel.RangeVariance(core.Label, 0, last), rel.RangeVariance(core.NotLabel, 0, last)
	if !(vp+vm > 0) {
		return nil
	}
	f := &totalsFit{n: float64(n.N), cp: make([]float64, len(pos.Prefixes)), cm: make([]float64, len(pos.Prefixes))}
	for j, i := range pos.Prefixes {
		f.cp[j] = (rel.RangeVariance(core.Label, 0, i) + vp - rel.RangeVariance(core.Label, i, last)) / 2 / (vp + vm)
		f.cm[j] = (rel.RangeVariance(core.NotLabel, 0, i) + vm - rel.RangeVariance(core.NotLabel, i, last)) / 2 / (vp + vm)
	}
	return f
}

// apply replaces the released prefix sums p and m (in place) by the fit.
func (f *totalsFit) apply(p, m []float64) {
	if f == nil {
		return
	}
	rho := p[len(p)-1] + m[len(m)-1] - f.n
	for j := range p {
		p[j] -= f.cp[j] * rho
		m[j] -= f.cm[j] * rho
	}
}

// NewROC builds the ROC result from the released prefix sums of the
// positives (Label) and negatives (NotLabel) of one release, read at the
// same prefixes, the last of which is N: under replace-one the two
// vectors are made to add up to the public n at N (totalsFit), the class
// totals are clamped (ClampTotals), each vector's ECDF is smoothed by
// method (over the release's noise pattern for tree-l2), the raw and
// smoothed curves are computed by package roc, and the smoothed one is
// interpolated between the thresholds (Interpolated); the intervals come
// from draws Monte-Carlo draws of the noise law (DefaultIntervalDraws;
// 0: none).
func NewROC(pos, neg *aggregation.Result, method string, draws int) (*ROC, error) {
	method, err := CheckSmoothing(method, len(pos.Prefixes), pos.Release.Spec.Mechanism.Bins)
	if err != nil {
		return nil, err
	}
	if pos.Release != neg.Release || pos.Component != core.Label || neg.Component != core.NotLabel {
		return nil, fmt.Errorf("analysis: a ROC curve needs the Label and NotLabel sums of one release")
	}
	n, err := pos.Release.Normaliser(lastSum(pos) + lastSum(neg))
	if err != nil {
		return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
	}
	p, m := values(pos), values(neg)
	fit := newTotalsFit(pos, neg, n)
	fit.apply(p, m)
	r := &ROC{Privacy: describe(pos.Release, core.Label, n), Smoothing: method, Notes: ClampTotals(p, m)}
	raw, err := roc.FromPrefixes(p, m, nil)
	if err != nil {
		return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
	}
	smoothed, err := roc.FromPrefixes(p, m, smoother(method, pos.Release.Mechanism(core.Label)))
	if err != nil {
		return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
	}
	r.Raw, r.Curve = NewCurve(raw), NewCurve(smoothed)
	if r.Interpolated, err = r.Curve.Interpolated(ROCInterpolation); err != nil {
		return nil, err
	}
	if draws > 0 {
		iv, err := rocIntervals(pos, neg, p, m, fit, smoothed, draws)
		if err != nil {
			return nil, fmt.Errorf("analysis: release %v: %w", pos.Release.ID, err)
		}
		r.AUCCI95, r.AUCCI95Population, r.Band95, r.IntervalMethod, r.AUCSamplingSE = &iv.Own, &iv.Population, iv.Band, iv.Regime, iv.SamplingSE
		r.AveragePrecisionCI95 = &iv.AP
	}
	r.noiseNotes(pos)
	r.prefixes = pos.Prefixes
	return r, nil
}

// SetThresholds sets Thresholds from g, the grid of the release: the
// lower end of g for point 0, then τ at each read prefix.
func (r *ROC) SetThresholds(g *ecdf.Grid) {
	r.Thresholds = append(make([]float64, 0, len(r.prefixes)+1), g.Min())
	for _, i := range r.prefixes {
		r.Thresholds = append(r.Thresholds, g.Threshold(i))
	}
}

// noiseNotes sets NoiseDominates from the public noise s.d. of the class
// totals of the release of pos against the released totals (rocRegime)
// and adds a note saying so, and one when the raw AUC lies outside
// [0, 1].
func (r *ROC) noiseNotes(pos *aggregation.Result) {
	rel, last := pos.Release, pos.Prefixes[len(pos.Prefixes)-1]
	sp := math.Sqrt(rel.RangeVariance(core.Label, 0, last))
	sm := math.Sqrt(rel.RangeVariance(core.NotLabel, 0, last))
	tp, tm := r.Raw.curve.Positives, r.Raw.curve.Negatives
	if rocRegime(sp, sm, tp, tm) == RegimeNoiseDominates {
		r.NoiseDominates = true
		r.Notes = append(r.Notes, fmt.Sprintf("noise dominates: the noise s.d. of the class totals (%.3g positives, %.3g negatives) exceeds a third of the released totals (%.4g, %.4g); the curves and the AUC carry little information at this n·ε and the intervals are near [0, 1]", sp, sm, tp, tm))
	}
	if a := r.Raw.AUC; !(a >= 0 && a <= 1) {
		r.Notes = append(r.Notes, fmt.Sprintf("the raw AUC %.4g is outside [0, 1]: the unsmoothed noisy curve is not a ROC curve where the noise is large against the class counts; read the smoothed AUC and its interval", a))
	}
}

// QueryROC reads the positives and negatives of the ROC release rel at
// prefixes (AllPrefixes for the whole curve) through u and returns
// NewROC of them with draws interval draws. Reading a release again
// costs no budget.
func QueryROC(ctx context.Context, u aggregation.UStat, rel *aggregation.Release, prefixes []int, method string, draws int) (*ROC, error) {
	var res [2]*aggregation.Result
	for k, c := range []core.Component{core.Label, core.NotLabel} {
		var err error
		if res[k], err = u.Sum(ctx, aggregation.Query{Release: rel, Component: c, Prefixes: prefixes}); err != nil {
			return nil, err
		}
	}
	return NewROC(res[0], res[1], method, draws)
}

// UnbinnedROC is the exact ROC curve of scores with 0/1 labels, every
// distinct score a threshold: the curve a private one estimates.
func UnbinnedROC(scores []float64, labels []int) (Curve, error) {
	distinct := slices.Clone(scores)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	bins := make([]int, len(scores))
	for k, s := range scores {
		i, _ := slices.BinarySearch(distinct, s)
		bins[k] = i + 1
	}
	return TrueROC(bins, labels, len(distinct), AllPrefixes(len(distinct)))
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

// AreaError returns the area between the true curve and c (for a ROC
// result, its smoothed curve, or the raw one under smoothing none),
// ∫|ROC − ROĈ| dFPR (roc.AreaError, dp-ecdf §6.5). A raw curve that is
// not monotone may cross itself; its area is measured along its polyline
// (roc.PathAreaError), which is the same integral for a monotone curve.
func (c Curve) AreaError(truth Curve) (float64, error) {
	if !c.curve.Monotone() {
		return roc.PathAreaError(truth.curve, c.curve)
	}
	return roc.AreaError(truth.curve, c.curve)
}

// Interpolated returns c with k − 1 points between consecutive
// thresholds (roc.Curve.Interpolate), and its PR curve.
func (c Curve) Interpolated(k int) (Curve, error) {
	ic, err := c.curve.Interpolate(k)
	if err != nil {
		return Curve{}, fmt.Errorf("analysis: %w", err)
	}
	return NewCurve(ic), nil
}

// ROCInterpolation is the factor of the PCHIP interpolation
// (roc.Curve.Interpolate) that NewROC applies to the smoothed curve to
// estimate the unbinned curve between the grid's thresholds.
const ROCInterpolation = 8

// ROCMechanism is the mechanism ROCParams puts in place of "auto" for
// the ROC releases of simulate, query roc and experiment: the
// partitioned release (mechanism.New), whose shallow parts at the two
// ends of the grid answer the prefixes the ROC area weighs most with
// less noise than one tree over the grid, at the same ε (roc/doc.go, "A
// partitioned release"; EXPERIMENTS.md, "Private ROC curves").
const ROCMechanism = "partitioned"

// ROCParams returns the mechanism of a ROC release made with the release
// parameters p: p with ROCMechanism in place of "auto" when the release
// is pure (δ = 0), allow (a server.Policy's Allow, say; nil allows every
// release) accepts it and it answers the ends of the grid with less
// noise than auto, else p unchanged.
//
// The ends: the variance of the first bin's and of the last bin's count
// of one class vector (the Label component), summed (endVariance). The
// area of a ROC curve weighs a class's prefix by the other class's mass
// it spans, and on scores where one class crowds at an end of the grid
// (calibrated probabilities at low prevalence: the negatives near 0) the
// end bins carry most of it; the partitioned release differs from auto
// by answering the ends with a shallower mechanism and the middle with
// the lower part's total added, so it is chosen only where it is
// shallower at the ends: mostly where its end parts are one level of
// leaves and auto's grid is deeper (at ε = 0.25…4, N = 38…160 and some
// of 32, 192 and 1024, not 256 or 512: TestROCParams), which covers the
// N that ROCBins gives for n ≈ 10⁴–10⁵. At 256 bins the ends tie, and
// there the partitioned release measured worse (EXPERIMENTS.md). The
// criterion reads only N, ε and the relation, never the data.
func ROCParams(p mechanism.Params, allow func(mechanism.Params) error) mechanism.Params {
	if p.Name != "auto" || p.Delta != 0 {
		return p
	}
	q := p
	q.Name, q.K = ROCMechanism, 0
	if allow != nil && allow(q) != nil || !(endVariance(q) < endVariance(p)) {
		return p
	}
	return q
}

// endVariance is the noise variance of the first and of the last bin's
// count of the Label component of a release with parameters p, summed
// (+Inf when p builds no mechanism).
func endVariance(p mechanism.Params) float64 {
	m, err := payload.ComponentMechanism(p, payload.Label)
	if err != nil {
		return math.Inf(1)
	}
	n := m.Bins()
	return mechanism.RangeVariance(m, 0, 1) + mechanism.RangeVariance(m, n-1, n)
}

// Bounds of ROCBins.
const (
	minROCBins = 32
	maxROCBins = 1024
	// rocBinsPerUnit is n·ε_vector per bin of ROCBins (roc-accuracy,
	// EXPERIMENTS.md).
	rocBinsPerUnit = 600
)

// ROCBins is the number of bins N of a linear grid for a ROC release of
// n instances at spec ε under relation r, from these public quantities
// alone (never the data): N = n·ε_v/600 rounded, within [32, 1024],
// where ε_v is the ε each class vector gets (ε under add/remove, ε/2
// under replace-one: payload.ComponentMechanism).
//
// The area error of a private curve is the sum of a noise term, about
// σ_N/(ε_v·n₊) (σ_N² the mechanism's per-prefix variance at ε = 1,
// growing like a power of log N) and a discretisation term of the grid,
// about C/N for the interpolated curve; their balance puts N* close to
// proportional to ε_v·n. The constant 600 was read off experiment
// roc-accuracy (synthetic and Bank probabilities, N = 16…1024, ε = 0.5,
// 1, 2, both relations), where the error is flat within about a factor
// 2 of the best N; with it the default is within 13 % of the best
// measured configuration at every point (EXPERIMENTS.md). Under
// add/remove n is the operator's expected number of instances, fixed
// before the data like the grid itself.
func ROCBins(n int, epsilon float64, r mechanism.Relation) int {
	ev := epsilon
	if r == mechanism.ReplaceOne {
		ev /= 2
	}
	bins := math.Round(float64(n) * ev / rocBinsPerUnit)
	if math.IsNaN(bins) {
		return minROCBins
	}
	return int(min(max(bins, minROCBins), maxROCBins))
}
