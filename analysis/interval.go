package analysis

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/roc"
)

// DefaultIntervalDraws is the number B of Monte-Carlo draws of the
// release's noise behind every interval (ECDF band, quantile and AUC
// intervals, ROC band) that the commands use unless told otherwise
// (--interval-draws); the constructors (NewECDF, NewROC, QueryECDF,
// QueryROC) take B as a parameter, 0 leaving the intervals out. With
// B = 500 the band's critical value is the 475th of 500 order
// statistics: the probability that the true noise exceeds it has
// Monte-Carlo s.e. √(0.05·0.95/B) ≈ 0.010, and each AUC interval end is
// an empirical 2.5 % quantile with s.e. about 0.007 in probability.
const DefaultIntervalDraws = 500

// intervalSeed seeds the Monte-Carlo draws. The noise law is public
// (the mechanism, its scales, the number of servers): only the release's
// own draw is secret, and none of it is used, so a fixed public seed is
// fine and makes every interval reproducible.
const intervalSeed = "fedecdf analysis intervals v1"

// z975 is the standard normal 97.5 % quantile.
const z975 = 1.959963984540054

// Band is a simultaneous 95 % confidence band of an ECDF at its
// thresholds (JSON schema in docs/json.md).
type Band struct {
	Lower []float64 `json:"lower"`
	Upper []float64 `json:"upper"`
	// Critical is c: the band is F̂ ± c·sd_i/n before clipping.
	Critical float64 `json:"critical"`
	// Draws is the number of Monte-Carlo draws behind Critical.
	Draws int `json:"draws"`
}

// noiseSampler draws fresh noise of the law of one release of
// component c of rel at prefixes: each server's full-scale draw of the
// component's mechanism, summed, in the component's units.
type noiseSampler struct {
	m        mechanism.Mechanism
	params   mechanism.Params // the release's, from which m is built
	comp     core.Component
	servers  int
	prefixes []int
	scale    float64
}

func newNoiseSampler(rel *aggregation.Release, c core.Component, prefixes []int) noiseSampler {
	return noiseSampler{m: rel.Mechanism(c), params: rel.Spec.Mechanism, comp: c, servers: max(rel.Servers, 1), prefixes: prefixes, scale: c.Scale()}
}

// draw writes one noise vector into dst, with seeds from rng.
func (s noiseSampler) draw(rng *rand.Rand, dst []float64) {
	clear(dst)
	for range s.servers {
		var seed [32]byte
		for k := 0; k < 32; k += 8 {
			binary.LittleEndian.PutUint64(seed[k:], rng.Uint64())
		}
		r := mechanism.SimulatedRelease(s.m, seed) // its time reveals nothing: no fixed work
		for j, i := range s.prefixes {
			dst[j] += float64(r.PrefixNoise(i)) / s.scale
		}
	}
}

// monteCarlo runs draws evaluations of f (given the draw's index b) on
// two goroutines, each with its own seeded stream (stream 0 and 1 of
// intervalSeed plus salt), and returns f's values in draw order.
func monteCarlo(draws int, salt uint64, f func(rng *rand.Rand, b int) float64) []float64 {
	out := make([]float64, draws)
	const workers = 2
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var key [32]byte
			copy(key[:], intervalSeed)
			binary.LittleEndian.PutUint64(key[24:], salt*workers+uint64(w))
			rng := rand.New(rand.NewChaCha8(key))
			for b := w; b < draws; b += workers {
				out[b] = f(rng, b)
			}
		}()
	}
	wg.Wait()
	return out
}

// upperQuantile returns a conservative empirical level-quantile of x
// (sorting x): the order statistic orderIndex(B, level, +1), 1.645
// binomial s.d. above ⌈level·B⌉. The draws come from a fixed public
// seed, so the plain ⌈level·B⌉-th would give every band of one noise
// law the same Monte-Carlo error: with B = 500 the ECDF band's critical
// value of a 256-bin tree held the noise's maximum in 0.935–0.943 of
// fresh draws, not 0.95 (EXPERIMENTS.md); read 1.645 s.d. higher, it
// falls short of the level with probability about 5 % over seeds.
func upperQuantile(x []float64, level float64) float64 {
	slices.Sort(x)
	return x[orderIndex(len(x), level, 1)]
}

// criticalValueOf returns the level-quantile of stat(η) over draws noise
// vectors of s (noiseDraws with salt).
func criticalValueOf(draws int, salt uint64, level float64, stat func([]float64) float64, s noiseSampler) float64 {
	return upperQuantile(monteCarloOver(noiseDraws(draws, salt, s), func(_ int, eta [][]float64) float64 {
		return stat(eta[0])
	}), level)
}

// newBand returns the simultaneous 95 % band of the ECDF e read from
// res: F̂_i ± c·s_i, where s_i is the exact noise s.d. of F̂_i (the
// mechanism's prefix variance times the number of servers, over n²) and
// c the Monte-Carlo 95 % quantile of max_i |F* − F̂|_i/s_i over draws
// fresh noise vectors of the release's law added to the released
// counts (F* normalised as F̂ is: by n, or under add/remove by the
// re-noised total). Under replace-one F* − F̂ = η*/n exactly, so the
// band covers the whole true ECDF at the read thresholds with
// probability 95 % up to the Monte-Carlo error. The ends are then made
// to fit what an ECDF can be (bandEnds): clipped to [0, 1] and made
// monotone, never to zero width while the noise s.d. is positive.
func newBand(res *aggregation.Result, e *ECDF, draws int) *Band {
	k := len(res.Prefixes)
	n := float64(e.N)
	sd := make([]float64, k)
	for j := range sd {
		sd[j] = math.Sqrt(res.Variance(j)) / n
	}
	s := newNoiseSampler(res.Release, core.Count, res.Prefixes)
	counts := values(res)
	public := e.Public
	stat := func(eta []float64) float64 {
		norm := n
		if !public {
			norm = max(counts[k-1]+eta[k-1], 1)
		}
		var m float64
		for j := range eta {
			if sd[j] > 0 {
				m = max(m, math.Abs((counts[j]+eta[j])/norm-e.Raw[j])/sd[j])
			}
		}
		return m
	}
	c := criticalValueOf(draws, 1, 0.95, stat, s)
	half := make([]float64, k)
	for j := range half {
		half[j] = c * sd[j]
	}
	lo, hi := bandEnds(e.Raw, half)
	return &Band{Lower: lo, Upper: hi, Critical: c, Draws: draws}
}

// bandEnds returns the ends of the band F̂_i ± h_i of a non-decreasing
// curve in [0, 1], as two non-decreasing curves in [0, 1] with
// lower_i < upper_i wherever h_i > 0. Each end is clipped to [0, 1]; an
// interval that lies wholly at or beyond an end of [0, 1] (F̂_i − h_i ≥ 1
// or F̂_i + h_i ≤ 0: the noise drew far from the truth) is moved inside
// instead, to [max(1 − 2h_i, 0), 1] or [0, min(2h_i, 1)], keeping its
// width. Then the band is made monotone (lower_i = max_{k≤i} lower_k,
// upper_i = min_{k≥i} upper_k): the true ECDF is a non-decreasing curve
// in [0, 1], so it lies in this band exactly when it lies in the raw
// one (or in the moved intervals, which are wider than the raw ones'
// part in [0, 1], empty or a point). Where that leaves no width at some
// i — no non-decreasing curve lies in the raw band, an atypical draw of
// the noise (≤ 5 %) — the band is the outer one instead
// (lower_i = min_{k≥i} lower_k, upper_i = max_{k≤i} upper_k), which
// holds every interval, so coverage is never lost and no interval is a
// point.
func bandEnds(raw, h []float64) (lower, upper []float64) {
	k := len(raw)
	lo, hi := make([]float64, k), make([]float64, k)
	for j, f := range raw {
		switch {
		case h[j] > 0 && f-h[j] >= 1:
			lo[j], hi[j] = max(1-2*h[j], 0), 1
		case h[j] > 0 && f+h[j] <= 0:
			lo[j], hi[j] = 0, min(2*h[j], 1)
		default:
			lo[j], hi[j] = clip01(f-h[j]), clip01(f+h[j])
		}
	}
	lower, upper = slices.Clone(lo), slices.Clone(hi)
	for j := 1; j < k; j++ {
		lower[j] = max(lower[j], lower[j-1])
	}
	for j := k - 2; j >= 0; j-- {
		upper[j] = min(upper[j], upper[j+1])
	}
	for j := range lower {
		if h[j] > 0 && !(lower[j] < upper[j]) {
			return outerBand(lo, hi)
		}
	}
	return lower, upper
}

// outerBand returns the smallest pair of non-decreasing curves holding
// every interval [lo_i, hi_i]: lower_i = min_{k≥i} lo_k, upper_i =
// max_{k≤i} hi_k.
func outerBand(lo, hi []float64) (lower, upper []float64) {
	lower, upper = slices.Clone(lo), slices.Clone(hi)
	for j := len(lo) - 2; j >= 0; j-- {
		lower[j] = min(lower[j], lower[j+1])
	}
	for j := 1; j < len(hi); j++ {
		upper[j] = max(upper[j], upper[j-1])
	}
	return lower, upper
}

// quantileInterval inverts band b at thresholds for probability p, on a
// grid whose lowest value is lowest: with j_lo the first read threshold
// where the upper curve reaches p and j_hi the first where the lower one
// does (the last threshold if it never does), the interval is
// [τ_{j_lo−1}, τ_{j_hi}], τ_{j_lo−1} the read threshold before j_lo
// (lowest before the first). When the true ECDF F lies in the band, the
// first read threshold j with F(τ_j) ≥ p lies in [j_lo, j_hi], and the
// data's p-quantile q (the smallest x with F(x) ≥ p, or any point
// between it and the next data value) satisfies F(τ_{j−1}) < p ≤ F(τ_j),
// so τ_{j−1} < q ≤ τ_j: the interval holds the data's quantile, not
// just the grid's, simultaneously with the band. It is at least the
// bin that holds the estimate, never a single point.
func quantileInterval(b *Band, thresholds []float64, lowest, p float64) [2]float64 {
	last := len(thresholds) - 1
	jlo, jhi := last, last
	if j, ok := firstAtLeast(b.Upper, p); ok {
		jlo = j
	}
	if j, ok := firstAtLeast(b.Lower, p); ok {
		jhi = j
	}
	lo := lowest
	if jlo > 0 {
		lo = thresholds[jlo-1]
	}
	return [2]float64{lo, thresholds[jhi]}
}

func firstAtLeast(f []float64, p float64) (int, bool) {
	for j, v := range f {
		if v >= p {
			return j, true
		}
	}
	return 0, false
}

// ROCBand is a simultaneous 95 % confidence band of the ROC curve (JSON
// schema in docs/json.md): on a fixed grid of false positive rates
// FPR[j], the band [Lower[j], Upper[j]] holds the TPR of the data set's
// own binned ROC curve at every FPR[j] at once with probability at least
// 95 %, given the DP noise: it lies between the curves of the extreme
// ECDF pairs of a simultaneous box of the counts (rocIntervals).
type ROCBand struct {
	FPR   []float64 `json:"fpr"`
	Lower []float64 `json:"lower"`
	Upper []float64 `json:"upper"`
	// Critical is c: the box holds every prefix and suffix count within
	// c noise s.d. of its released value.
	Critical float64 `json:"critical"`
	// Draws is the number of Monte-Carlo draws behind Critical.
	Draws int `json:"draws"`
}

// Legend names the band in a chart's legend.
func (b *ROCBand) Legend() string { return "simultaneous 95 % band (DP noise)" }

// Edges returns the band's FPR grid and its lower and upper TPR, none
// for a nil band (a result built without interval draws).
func (b *ROCBand) Edges() (fpr, lower, upper []float64) {
	if b == nil {
		return nil, nil, nil
	}
	return b.FPR, b.Lower, b.Upper
}

// At returns the band's point nearest to false positive rate x: its FPR
// and the lower and upper TPR there; ok is false for a nil band.
func (b *ROCBand) At(x float64) (fpr, lower, upper float64, ok bool) {
	if b == nil || len(b.FPR) == 0 {
		return 0, 0, 0, false
	}
	j := min(max(int(math.Round(x*float64(len(b.FPR)-1))), 0), len(b.FPR)-1)
	return b.FPR[j], b.Lower[j], b.Upper[j], true
}

// BandFPRs are the false positive rates at which text output shows the
// ROC band.
var BandFPRs = []float64{0.05, 0.1, 0.2, 0.5}

// rocBandPoints is the size of the FPR grid of ROCBand: 0, 0.01, …, 1.
const rocBandPoints = 101

// rocIntervals returns the 95 % intervals of the ROC curve built by
// NewROC from pos and neg (fitted into p and m), and the regime they
// come from (rocRegime), by one of two methods:
//
// The box (countBox; regimes RegimeBox and RegimeNoiseDominates, and
// the ROC band in every regime): a simultaneous 95 % box of the true
// prefix and suffix counts of both classes, from the exact public noise
// law, is inverted: the AUC over every pair of ECDFs the box allows lies
// between the AUCs of its two extreme pairs, and their curves bound the
// ROC curve at every FPR (countBox.at). It holds whenever the box holds
// the truth, so its coverage is at least 95 % (up to the Monte-Carlo
// error of the box's critical value) at every n and ε, and its width is
// positive while the noise is. The average precision's interval comes
// from the box too (envelope.averagePrecision) unless apLinear, where
// it is the basic bootstrap below of the raw AP (roc.PR.AveragePrecision
// of the re-noised raw curve), kept only if it has positive width.
//
// The bootstrap (RegimeLinear, both σ_c ≤ linearCV·T̂_c), for the AUC
// intervals: fresh noise of the release's law is added draws times to
// both released vectors, the totals fit applied, and the raw
// (unclipped, unsmoothed) AUC* taken; with q_lo, q_hi the 2.5 % and
// 97.5 % quantiles of AUC* and Â the raw AUC, the interval is
// [2Â − q_hi, 2Â − q_lo] clipped to [0, 1] (basic bootstrap). The raw
// AUC is a smooth function of the counts, with no boundary to collapse
// onto, and in this regime nearly linear in the noise; it is much
// narrower than the box's where the noise is small. Should the clipped
// interval have zero width, the box's is used instead. (A bootstrap band
// of the smoothed curves undercovered the whole curve at n = 2000, ε = 1:
// 0.88, TestROCIntervalsSmallN; hence the box's band everywhere.)
//
// The population AUC adds the sampling variance of the Hanley–McNeil
// formula (Hanley & McNeil 1982, the DeLong variance under their
// exponential approximation):
// Var = [A(1−A) + (n₁−1)(Q₁−A²) + (n₀−1)(Q₂−A²)]/(n₁n₀), Q₁ = A/(2−A),
// Q₂ = 2A²/(1+A), reported beside DeLong's variance computed from the
// smoothed curve's bin masses (deLong), which the interval uses. In the
// bootstrap regime n₁, n₀ are the released class totals, and each
// half-width h of the noise interval becomes √(h² + (1.96·√Var)²); in
// the box regime see countBox.boxIntervals.
func rocIntervals(pos, neg *aggregation.Result, p, m []float64, fit *totalsFit, c *roc.Curve, draws int) (iv rocInterval, err error) {
	k := len(p)
	fpr := make([]float64, rocBandPoints)
	for j := range fpr {
		fpr[j] = float64(j) / (rocBandPoints - 1)
	}
	last := pos.Prefixes[k-1]
	sp := math.Sqrt(pos.Release.RangeVariance(core.Label, 0, last))
	sm := math.Sqrt(pos.Release.RangeVariance(core.NotLabel, 0, last))
	iv.Regime = rocRegime(sp, sm, p[k-1], m[k-1])
	iv.Own, iv.Population, iv.AP, iv.Band = newCountBox(pos, neg, draws).boxIntervals(fpr)
	iv.Band.Draws = draws
	if iv.Regime != RegimeLinear {
		return iv, nil
	}
	ps := newNoiseSampler(pos.Release, core.Label, pos.Prefixes)
	ms := newNoiseSampler(neg.Release, core.NotLabel, neg.Prefixes)
	var mu sync.Mutex
	apDraws := make([]float64, draws)
	a := monteCarloOver(noiseDraws(draws, 2, ps, ms), func(b int, eta [][]float64) float64 {
		pp, mm := make([]float64, k), make([]float64, k)
		for j := range pp {
			pp[j] = eta[0][j] + p[j]
			mm[j] = eta[1][j] + m[j]
		}
		fit.apply(pp, mm)
		ClampTotals(pp, mm)
		raw, e := roc.FromPrefixes(pp, mm, nil)
		if e != nil {
			mu.Lock()
			err = e
			mu.Unlock()
			return math.NaN()
		}
		apDraws[b] = raw.PR(1).AveragePrecision()
		return raw.AUC()
	})
	if err != nil {
		return iv, fmt.Errorf("re-drawn noise: %w", err)
	}
	raw, err := roc.FromPrefixes(p, m, nil)
	if err != nil {
		return iv, err
	}
	if apLinear(sp, sm, p[k-1], m[k-1]) {
		if ap, ok := basicInterval(raw.PR(1).AveragePrecision(), apDraws); ok {
			iv.AP = ap
		}
	}
	auc := raw.AUC()
	lo, hi := quantiles95(a)
	own, ok := basicInterval(auc, a)
	if !ok {
		iv.Regime = RegimeBox
		return iv, nil
	}
	n1, n0 := max(p[k-1], 1), max(m[k-1], 1)
	iv.SamplingSE = &SamplingSE{DeLong: math.Sqrt(deLong(c, n1, n0)), HanleyMcNeil: math.Sqrt(hanleyMcNeil(auc, n1, n0))}
	s := z975 * iv.SamplingSE.DeLong
	// hi − auc and auc − lo are the lower and upper half-widths of the
	// (unclipped) noise interval.
	iv.Own, iv.Population = own, [2]float64{clip01(auc - math.Hypot(hi-auc, s)), clip01(auc + math.Hypot(auc-lo, s))}
	return iv, nil
}

// basicInterval returns the basic bootstrap 95 % interval
// [2θ̂ − q_hi, 2θ̂ − q_lo] of an estimate θ̂ from its re-noised draws
// (quantiles95, sorting draws), clipped to [0, 1]; ok is false when the
// clipped interval has no width.
func basicInterval(est float64, draws []float64) (iv [2]float64, ok bool) {
	lo, hi := quantiles95(draws)
	iv = [2]float64{clip01(2*est - hi), clip01(2*est - lo)}
	return iv, iv[1] > iv[0]
}

// rocInterval is what rocIntervals returns.
type rocInterval struct {
	Own, Population, AP [2]float64
	Band                *ROCBand
	Regime              string
	SamplingSE          *SamplingSE
}

// SamplingSE is the sampling standard error of the AUC behind the
// population interval in the bootstrap regime (JSON schema in
// docs/json.md): DeLong's, used, and Hanley–McNeil's, for comparison.
type SamplingSE struct {
	DeLong       float64 `json:"delong"`
	HanleyMcNeil float64 `json:"hanley_mcneil"`
}

// deLong is the DeLong variance of the AUC of binned scores with n1
// positives and n0 negatives whose ECDFs are those of the (monotone)
// curve c: with p_j, q_j the positives' and negatives' masses in bin j,
// a positive in bin j has placement V₁₀(j) = Q_{j−1} + q_j/2 (the
// negatives below it, ties halved), a negative V₀₁(j) = 1 − P_j + p_j/2,
// A = Σ p_j V₁₀(j) = Σ q_j V₀₁(j), and
// Var = Var_pos(V₁₀)/n1 + Var_neg(V₀₁)/n0 (DeLong et al. 1988; exact
// for binned scores, where ties are the rule, unlike Hanley–McNeil's
// exponential approximation).
func deLong(c *roc.Curve, n1, n0 float64) float64 {
	var a, s10, s01 float64
	for i := 1; i < len(c.TPR); i++ {
		// Bin i holds the instances between thresholds i−1 and i: F(i) −
		// F(i−1) = rate(i−1) − rate(i).
		p, q := c.TPR[i-1]-c.TPR[i], c.FPR[i-1]-c.FPR[i]
		below, above := 1-c.FPR[i-1], c.TPR[i]
		v10, v01 := below+q/2, above+p/2
		a += p * v10
		s10 += p * v10 * v10
		s01 += q * v01 * v01
	}
	return max(s10-a*a, 0)/n1 + max(s01-a*a, 0)/n0
}

// The regimes of the ROC intervals (ROC.Regime).
const (
	// RegimeLinear: both class totals exceed 1/linearCV = 4 noise s.d.;
	// the intervals come from the bootstrap of the raw AUC.
	RegimeLinear = "bootstrap"
	// RegimeBox: the intervals come from the inverted box of the counts.
	RegimeBox = "box"
	// RegimeNoiseDominates: a class total is within 1/dominatesCV = 3
	// noise s.d. of zero; the intervals come from the box and are near
	// the whole range.
	RegimeNoiseDominates = "noise-dominates"
)

// rocRegime returns the regime of the ROC intervals from the noise s.d.
// sp, sm of the positives' and negatives' totals and their released
// values tp, tm: RegimeNoiseDominates when σ_c > T̂_c/3 for a class (its
// total is not told from zero at 3 s.d.), RegimeLinear when
// σ_c ≤ T̂_c/4 for both, else RegimeBox.
func rocRegime(sp, sm, tp, tm float64) string {
	switch {
	case !(sp <= dominatesCV*tp) || !(sm <= dominatesCV*tm):
		return RegimeNoiseDominates
	case sp <= linearCV*tp && sm <= linearCV*tm:
		return RegimeLinear
	}
	return RegimeBox
}

// quantiles95 returns conservative empirical 2.5 % and 97.5 % quantiles
// of x (sorting x): the order statistics orderIndex(B, 0.025, −1) and
// orderIndex(B, 0.975, +1).
func quantiles95(x []float64) (lo, hi float64) {
	slices.Sort(x)
	return x[orderIndex(len(x), 0.025, -1)], x[orderIndex(len(x), 0.975, 1)]
}

// orderIndex returns the 0-based index of the order statistic of B draws
// that estimates their level-quantile conservatively: moved by 1.645
// binomial s.d. √(B·level·(1 − level)) beyond B·level, towards the upper
// tail for side +1 and the lower for −1, so that with probability about
// 95 % over the Monte-Carlo draws the chosen value lies beyond the
// law's own level-quantile. The intervals use a fixed public seed, so an
// unlucky draw would bias every interval alike; this bounds that bias.
func orderIndex(b int, level float64, side int) int {
	k := float64(b)*level + float64(side)*1.6448536269514722*math.Sqrt(float64(b)*level*(1-level))
	if side > 0 {
		return min(max(int(math.Ceil(k))-1, 0), b-1)
	}
	return min(max(int(math.Floor(k)), 0), b-1)
}

// hanleyMcNeil is the Hanley–McNeil variance of an AUC a estimated from
// n1 positives and n0 negatives.
func hanleyMcNeil(a, n1, n0 float64) float64 {
	a = min(max(a, 0), 1)
	q1, q2 := a/(2-a), 2*a*a/(1+a)
	return max(a*(1-a)+(n1-1)*(q1-a*a)+(n0-1)*(q2-a*a), 0) / (n1 * n0)
}

func clip01(x float64) float64 { return min(max(x, 0), 1) }
