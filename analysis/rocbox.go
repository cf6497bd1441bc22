package analysis

import (
	"math"
	"slices"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/roc"
)

// Levels of the box of the ROC counts: the data set's AUC interval and
// the ROC band hold at boxLevel; the population AUC interval combines a
// box at popBoxLevel with a sampling interval at popBoxLevel (a union
// bound: 2.5 % + 2.5 %).
const (
	boxLevel    = 0.95
	popBoxLevel = 0.975
	// z9875 is the standard normal 98.75 % quantile: a two-sided 97.5 %
	// sampling interval.
	z9875 = 2.241402727604947
)

// Regimes of the ROC intervals, from the noise s.d. σ_c of each class
// total against its released value T̂_c (rocIntervals).
const (
	// linearCV: when σ_c ≤ linearCV·T̂_c for both classes the AUC is
	// close enough to linear in the noise (the ratio's relative bias is
	// about CV² ≤ 6 %, which the basic bootstrap corrects to first
	// order) for the bootstrap of the raw AUC to give the interval
	// (TestROCIntervalsSmallN, n = 400: CV ≈ 0.2).
	linearCV = 0.25
	// dominatesCV: when σ_c > dominatesCV·T̂_c for a class, its total is
	// not told from zero at 3 s.d.: the noise dominates.
	dominatesCV = 1.0 / 3
	// apLinearCV: when σ_c ≤ apLinearCV·T̂_c for both classes the
	// average precision's interval comes from the bootstrap of the raw
	// AP (apLinear). The AP weighs the precision TP/(TP + FP) at every
	// threshold by its recall step; at the top thresholds, where TP + FP
	// is within a few σ of zero, that ratio is noise, and the recall
	// those thresholds carry is a few σ_1/T̂_1: a few times apLinearCV
	// of the AP. Above it (TestAveragePrecisionIntervalSmallN, n = 2000,
	// ε = 1: σ_1/T̂_1 ≈ 0.05) the bootstrap's width swung between 0.5
	// and 1, no narrower than the box's.
	apLinearCV = 0.02
)

// apLinear reports whether the average precision's interval comes from
// the bootstrap: σ_c ≤ apLinearCV·T̂_c for both classes, with the noise
// s.d. sp, sm of the class totals and their released values tp, tm.
func apLinear(sp, sm, tp, tm float64) bool {
	return sp <= apLinearCV*tp && sm <= apLinearCV*tm
}

// countBox is a simultaneous confidence box of the true prefix counts of
// one release's positives and negatives at the read prefixes: with
// probability (its level) every prefix P_j and every suffix P_N − P_j of
// both classes lies within crit noise s.d. of its released value.
type countBox struct {
	p, m            []float64 // released prefix counts (not fitted)
	sdP, sdM        []float64 // noise s.d. of each prefix
	sdSP, sdSM      []float64 // noise s.d. of each suffix P_N − P_j
	n               float64   // public n (replace-one), 0 when not public
	crit95, crit975 float64
}

// newCountBox measures the box's critical values at boxLevel and
// popBoxLevel: the quantiles (conservative: orderIndex) of max over both
// classes and all j of |η_j|/sd_j and |η_N − η_j|/sd'_j over draws noise
// vectors of the release's public law.
func newCountBox(pos, neg *aggregation.Result, draws int) *countBox {
	k := len(pos.Prefixes)
	rel, last := pos.Release, pos.Prefixes[k-1]
	b := &countBox{p: values(pos), m: values(neg), n: float64(rel.Reports)}
	sd := func(c core.Component, from, to int) float64 { return math.Sqrt(rel.RangeVariance(c, from, to)) }
	for _, i := range pos.Prefixes {
		b.sdP, b.sdM = append(b.sdP, sd(core.Label, 0, i)), append(b.sdM, sd(core.NotLabel, 0, i))
		b.sdSP, b.sdSM = append(b.sdSP, sd(core.Label, i, last)), append(b.sdSM, sd(core.NotLabel, i, last))
	}
	ps := newNoiseSampler(rel, core.Label, pos.Prefixes)
	ms := newNoiseSampler(rel, core.NotLabel, neg.Prefixes)
	worst := monteCarloOver(noiseDraws(draws, 3, ps, ms), func(_ int, eta [][]float64) float64 {
		return max(maxStandardised(eta[0], b.sdP, b.sdSP), maxStandardised(eta[1], b.sdM, b.sdSM))
	})
	slices.Sort(worst)
	b.crit95, b.crit975 = worst[orderIndex(draws, boxLevel, 1)], worst[orderIndex(draws, popBoxLevel, 1)]
	return b
}

// maxStandardised is max_j of |η_j|/sd_j and |η_N − η_j|/sdS_j (terms
// of zero s.d. left out).
func maxStandardised(eta, sd, sdS []float64) float64 {
	var w float64
	last := eta[len(eta)-1]
	for j, e := range eta {
		if sd[j] > 0 {
			w = max(w, math.Abs(e)/sd[j])
		}
		if sdS[j] > 0 {
			w = max(w, math.Abs(last-e)/sdS[j])
		}
	}
	return w
}

// envelope is what the box allows at one critical value: the lower and
// upper envelopes of the ECDFs F_pos = P/P_N and F_neg = M/M_N over every
// pair of count vectors in the box, the bounds of each class's suffix
// counts S_j = P_N − P_j (the true positives and false positives of the
// curve's point j + 1) and the lower bounds of the class totals.
type envelope struct {
	lp, up, lm, um         []float64
	sLoP, sHiP, sLoM, sHiM []float64
	totals                 [2]float64 // lower bounds of P_N, M_N
	tp, tm                 [2]float64 // bounds of P_N and of M_N
}

// envelopes returns the box's envelope at critical value c (ok false
// when the box holds no counts: then it missed the truth). See
// classEnvelope.
func (b *countBox) envelopes(c float64) (e envelope, ok bool) {
	k := len(b.p)
	tp := [2]float64{max(b.p[k-1]-c*b.sdP[k-1], 0), b.p[k-1] + c*b.sdP[k-1]}
	tm := [2]float64{max(b.m[k-1]-c*b.sdM[k-1], 0), b.m[k-1] + c*b.sdM[k-1]}
	if b.n > 0 { // P_N + M_N = n
		tp = [2]float64{max(tp[0], b.n-tm[1]), min(tp[1], b.n-tm[0])}
		tm = [2]float64{max(tm[0], b.n-tp[1]), min(tm[1], b.n-tp[0])}
	}
	if tp[0] > tp[1] || tm[0] > tm[1] {
		return e, false
	}
	e.lp, e.up, e.sLoP, e.sHiP = classEnvelope(b.p, b.sdP, b.sdSP, tp, c)
	e.lm, e.um, e.sLoM, e.sHiM = classEnvelope(b.m, b.sdM, b.sdSM, tm, c)
	e.totals, e.tp, e.tm = [2]float64{tp[0], tm[0]}, tp, tm
	return e, true
}

// averagePrecision returns the interval of the data set's average
// precision over every count vector the box allows. At the curve's
// points i = 0, …, k−1 (point i counts as positive the bins above the
// read prefix i − 1, every bin at i = 0) TP_i = S_{i−1} and
// FP_i = S'_{i−1} (the suffix counts of the positives and the negatives,
// the class totals at i = 0), so precision π_i = TP_i/(TP_i + FP_i) lies
// in [ℓ_i, u_i] = [TP_lo/(TP_lo + FP_hi), TP_hi/(TP_hi + FP_lo)]. With
// G_i = F_pos at prefix i − 1 (G_0 = 0, G_k = 1), the data set's
// AP = Σ_i (G_{i+1} − G_i)·π_i (recall steps times precision; the
// points with TP = 0, which the PR curve leaves out, have weight 0), and
// since the masses G_{i+1} − G_i are not negative,
// AP ≥ Σ_i (G_{i+1} − G_i)·ℓ_i = ℓ_{k−1} + Σ_{i≥1} G_i·(ℓ_{i−1} − ℓ_i)
// (summation by parts), which is smallest over G_i in the box's
// envelope [lower_i, upper_i] at the lower end where ℓ_{i−1} > ℓ_i and
// the upper end elsewhere; likewise the upper end with u. Dropping the
// monotonicity of G only widens the interval, so it holds whenever the
// box holds the truth; it is clipped to [0, 1].
func (e envelope) averagePrecision() [2]float64 {
	k := len(e.lp)
	lo, hi := make([]float64, k), make([]float64, k)
	for i := range k {
		tp, fp := e.tp, e.tm
		if i > 0 {
			tp, fp = [2]float64{e.sLoP[i-1], e.sHiP[i-1]}, [2]float64{e.sLoM[i-1], e.sHiM[i-1]}
		}
		lo[i], hi[i] = ratio(tp[0], fp[1], 0), ratio(tp[1], fp[0], 1)
	}
	a, b := lo[k-1], hi[k-1]
	for i := 1; i < k; i++ {
		g := [2]float64{e.lp[i-1], e.up[i-1]}
		if d := lo[i-1] - lo[i]; d > 0 {
			a += g[0] * d
		} else {
			a += g[1] * d
		}
		if d := hi[i-1] - hi[i]; d > 0 {
			b += g[1] * d
		} else {
			b += g[0] * d
		}
	}
	return [2]float64{clip01(a), clip01(b)}
}

// classEnvelope returns the lower and upper envelopes of F_j = P_j/P_N
// over the counts with |P_j − p_j| ≤ c·sd_j, |S_j − s_j| ≤ c·sdS_j
// (S_j = P_N − P_j, s_j = p_N − p_j), P_j, S_j ≥ 0 and P_N in total:
// F_j = P_j/(P_j + S_j) is increasing in P_j and decreasing in S_j, and
// F_j = P_j/P_N, so each bound is the tighter of the two forms; then the
// envelopes are made monotone (lower_j = max_{i≤j}, upper_j = min_{i≥j})
// with F_N = 1, which a true ECDF satisfies. sLo and sHi are the bounds
// of S_j (0 at N).
func classEnvelope(p, sd, sdS []float64, total [2]float64, c float64) (lo, hi, sLo, sHi []float64) {
	k := len(p)
	lo, hi, sLo, sHi = make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	for j := range k - 1 {
		s := p[k-1] - p[j]
		aP, bP := max(p[j]-c*sd[j], 0, total[0]-(s+c*sdS[j])), min(p[j]+c*sd[j], total[1])
		aS, bS := max(s-c*sdS[j], 0, total[0]-bP), min(s+c*sdS[j], total[1]-aP)
		sLo[j], sHi[j] = aS, max(bS, aS)
		lo[j] = max(ratio(aP, bS, 0), safeDiv(aP, total[1], 0))
		hi[j] = min(ratio(bP, aS, 1), safeDiv(bP, total[0], 1))
		lo[j], hi[j] = clip01(lo[j]), clip01(hi[j])
	}
	lo[k-1], hi[k-1] = 1, 1
	for j := 1; j < k; j++ {
		lo[j] = max(lo[j], lo[j-1])
	}
	for j := k - 2; j >= 0; j-- {
		hi[j] = min(hi[j], hi[j+1])
	}
	return lo, hi, sLo, sHi
}

// ratio is a/(a + b), or empty when a + b is not positive.
func ratio(a, b, empty float64) float64 {
	if a+b <= 0 {
		return empty
	}
	return a / (a + b)
}

// safeDiv is a/b, or empty when b is not positive.
func safeDiv(a, b, empty float64) float64 {
	if !(b > 0) {
		return empty
	}
	return a / b
}

// boxROC is what the box gives at critical value c: the intervals of the
// data set's AUC and average precision and the two envelope curves.
type boxROC struct {
	auc, ap      [2]float64
	lower, upper *roc.Curve
	totals       [2]float64 // lower bounds of the class totals
}

// at returns the AUC and average precision (envelope.averagePrecision)
// intervals and the envelope curves of the box at c: the AUC
// P(S⁺ > S⁻) + ½P(S⁺ = S⁻) grows as F_pos falls and as F_neg rises
// (stochastic order), so over the box it is largest at (lower F_pos,
// upper F_neg) and smallest at (upper F_pos, lower F_neg); both pairs
// are valid ECDFs, so the interval is attained. The ROC curve of every
// pair in the box lies between those two pairs' curves at every FPR.
// ok is false when the box holds no counts.
func (b *countBox) at(c float64) (boxROC, bool) {
	e, ok := b.envelopes(c)
	if !ok {
		return boxROC{}, false
	}
	lower, err1 := roc.FromPrefixes(e.up, e.lm, nil)
	upper, err2 := roc.FromPrefixes(e.lp, e.um, nil)
	if err1 != nil || err2 != nil { // totals are 1: cannot fail
		return boxROC{}, false
	}
	return boxROC{auc: [2]float64{lower.AUC(), upper.AUC()}, ap: e.averagePrecision(), lower: lower, upper: upper, totals: e.totals}, true
}

// boxIntervals returns the box's intervals: the data set's AUC at
// boxLevel, the population AUC as the popBoxLevel box widened at each end
// by z9875 sampling s.d. from the Birnbaum–Klose bound
// Var(Â) ≤ A(1 − A)/min(n₁, n₀), which holds for every pair of score
// laws (largest over the interval, at the box's lower class totals),
// the data set's average precision at boxLevel, and the ROC band between
// the envelope curves on fpr. A box that holds no counts gives [0, 1]
// and the band [0, 1].
func (b *countBox) boxIntervals(fpr []float64) (own, population, ap [2]float64, band *ROCBand) {
	own, population, ap = [2]float64{0, 1}, [2]float64{0, 1}, [2]float64{0, 1}
	band = &ROCBand{FPR: fpr, Lower: make([]float64, len(fpr)), Upper: make([]float64, len(fpr)), Critical: b.crit95}
	for j := range fpr {
		band.Upper[j] = 1
	}
	r, ok := b.at(b.crit95)
	if !ok {
		return own, population, ap, band
	}
	own, ap = r.auc, r.ap
	for j, x := range fpr {
		band.Lower[j], band.Upper[j] = clip01(r.lower.TPRAt(x)), clip01(r.upper.TPRAt(x))
	}
	if r, ok := b.at(b.crit975); ok {
		// Birnbaum–Klose: Var(Â) ≤ A(1 − A)/min(n₁, n₀) for any score
		// laws, largest over the interval at the A nearest 1/2.
		a := min(max(0.5, r.auc[0]), r.auc[1])
		s := z9875 * math.Sqrt(a*(1-a)/max(min(r.totals[0], r.totals[1]), 1))
		population = [2]float64{clip01(r.auc[0] - s), clip01(r.auc[1] + s)}
	}
	return own, population, ap, band
}
