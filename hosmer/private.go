package hosmer

import (
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/roc"
)

// Config configures Private.
type Config struct {
	// Bins is N, the size of the public grid over predicted probabilities.
	Bins int
	// Reports is n: the public number of instances under replace-one, or
	// under add/remove, where n is private, a released noisy total
	// (ecdf.Normaliser), for post-processing an add/remove release.
	Reports int
	// Groups is Q, 10 when 0.
	Groups int
	// Smooth, when not nil, smooths the released ECDF before the
	// quantile search. With CountFromLabels it smooths the positives' and
	// the negatives' prefix curves separately instead (each normalised by
	// its released total, as a ROC curve's are): the counts are their sum
	// and O_1 is read from the smoothed positives, which on Bank cuts the
	// relative MSE of H 2–35 times against smoothing the counts alone.
	Smooth roc.Smoother
	// CountFromLabels takes the counts from the Label and NotLabel
	// components (count = y + (1 − y)) instead of a Count component, as
	// JointPlan's single release requires.
	CountFromLabels bool
	// MinExpected, when positive, clips every released expected count
	// E_1, E_0 of a group to at least MinExpected instances (post-
	// processing that keeps H finite when noise drives a small expected
	// count to or below 0; dp-ecdf §6.6 traces the large errors of H to
	// exactly these denominators). 0 leaves them, and Statistic then
	// fails on a non-positive one.
	MinExpected float64
	// Centers, when not nil, holds the centre probability of every bin
	// (BinCenters), and E_1 of each group is estimated as Σ ĉ_i·Centers[i]
	// over its bins from the per-bin counts of the released (smoothed)
	// ECDF, with the group sizes from the same counts; no Probability
	// component is read (GridPlan).
	Centers []float64
	// Debias subtracts the noise's expected contribution from H
	// (DebiasedStatistic), with each group's V_g = Var(Ô_1g − Ê_1g)
	// from the source's noise variances (src must implement
	// NoiseSource): Var(Ô_1g) + Var(Ê_1g) when E_1 is released
	// (independent components), and (1 − m̄)²·Var(Ô_1g) + m̄²·Var(Ô_0g)
	// with m̄ = E_1g/size on the grid (Centers; E_1 ≈ m̄·size moves with
	// the count noise, smoothing ignored, which overstates V_g).
	// Post-processing, like everything after the release.
	Debias bool
}

// NoiseSource is a Source that knows the noise variance of its range
// sums prefix(to) − prefix(from) (roc.UStatSource does).
type NoiseSource interface {
	roc.Source
	RangeVariance(c core.Component, from, to int) (float64, error)
}

// Result is a private Hosmer–Lemeshow test.
type Result struct {
	Boundaries []int   // last bin of each group
	Groups     []Group // released group sums, after clipping
	H          float64 // dp-ecdf Eq. 5 on Groups
	PValue     float64 // P(χ²_{G−2} ≥ H), G = len(Groups)
	// ECDF is the released ECDF of the probabilities the groups were cut
	// from, after post-processing (smoothing), at every bin; nil for an
	// exact result. NullTest draws its null data sets from it.
	ECDF []float64
}

// Finite returns &H and &PValue, each nil (JSON null, where NaN has no
// JSON form) when not a finite number — PValue with fewer than 3 groups.
func (r *Result) Finite() (statistic, pValue *float64) {
	return finite(r.H), finite(r.PValue)
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Private runs dp-ecdf Algorithm 2 on released prefix sums: the ECDF of
// the predicted probabilities F̂(τ_i) = count(i)/n at every bin
// (smoothed when cfg.Smooth is set; see Config.Smooth), its quantiles q/Q
// by Algorithm 1
// (Boundaries), then the counts, Σy and Σp at the group boundaries,
// differenced into groups (FromPrefixes), projected onto the feasible
// set 0 ≤ O_1, E_1 ≤ Size (each released sum clipped; exact sums are
// unchanged) and into H and its p-value. Everything after the release
// of src is post-processing: the result is as private as src's releases
// (PaperPlan, JointPlan).
func Private(src roc.Source, cfg Config) (*Result, error) {
	if cfg.Groups == 0 {
		cfg.Groups = 10
	}
	if cfg.Bins < 1 || cfg.Reports < 1 {
		return nil, fmt.Errorf("hosmer: bins %d and reports %d must be positive", cfg.Bins, cfg.Reports)
	}
	if cfg.Centers != nil && len(cfg.Centers) != cfg.Bins {
		return nil, fmt.Errorf("hosmer: %d bin centres for %d bins", len(cfg.Centers), cfg.Bins)
	}
	f, counts, smoothedPos, err := releasedECDF(src, cfg)
	if err != nil {
		return nil, err
	}
	bounds, err := Boundaries(f, cfg.Groups)
	if err != nil {
		return nil, err
	}
	groups, err := releasedGroups(src, cfg, f, counts, smoothedPos, bounds)
	if err != nil {
		return nil, err
	}
	h, err := Statistic(groups)
	if err == nil && cfg.Debias {
		h, err = debiased(src, groups, cfg.Centers != nil)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Boundaries: bounds, Groups: groups, H: h, PValue: math.NaN(), ECDF: f}
	if len(groups) >= 3 {
		res.PValue, _ = PValue(h, len(groups))
	}
	return res, nil
}

// releasedECDF returns the released ECDF of the probabilities f (smoothed
// when cfg.Smooth is set), the raw count prefixes behind it at every bin,
// and, when the counts are the two smoothed classes (Config.Smooth), the
// smoothed positives' prefixes.
func releasedECDF(src roc.Source, cfg Config) (f, counts, smoothedPos []float64, err error) {
	if cfg.CountFromLabels && cfg.Smooth != nil {
		counts, smoothedPos, err = classPrefixes(src, cfg.Bins, float64(cfg.Reports), cfg.Smooth)
	} else {
		counts, err = countPrefixes(src, allBins(cfg.Bins), cfg.CountFromLabels)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	f = make([]float64, len(counts))
	for i, c := range counts {
		f[i] = c / float64(cfg.Reports)
	}
	if cfg.Smooth != nil && smoothedPos == nil {
		if f, err = cfg.Smooth(f); err != nil {
			return nil, nil, nil, fmt.Errorf("hosmer: smoothing the ECDF of probabilities: %w", err)
		}
	}
	return f, counts, smoothedPos, nil
}

// releasedGroups forms the groups ending at bounds and clips them: sizes
// and E_1 from the grid (Config.Centers) or from the counts and the
// Probability component, O_1 from the smoothed positives or the Label
// component.
func releasedGroups(src roc.Source, cfg Config, f, counts, smoothedPos []float64, bounds []int) ([]Group, error) {
	var sizes, expected, pos []float64
	var err error
	if cfg.Centers != nil {
		sizes, expected = gridPrefixes(f, float64(cfg.Reports), cfg.Centers, bounds)
	} else {
		sizes = atBounds(counts, bounds)
		if expected, err = src.Prefixes(core.Probability, bounds); err != nil {
			return nil, fmt.Errorf("hosmer: expected positives: %w", err)
		}
	}
	if smoothedPos != nil {
		pos = atBounds(smoothedPos, bounds)
	} else if pos, err = src.Prefixes(core.Label, bounds); err != nil {
		return nil, fmt.Errorf("hosmer: observed positives: %w", err)
	}
	groups, err := FromPrefixes(bounds, sizes, pos, expected)
	if err != nil {
		return nil, err
	}
	for k := range groups {
		clip(&groups[k], cfg.MinExpected)
	}
	return groups, nil
}

// atBounds returns prefix[b−1] for every bin b of bounds.
func atBounds(prefix []float64, bounds []int) []float64 {
	v := make([]float64, len(bounds))
	for k, b := range bounds {
		v[k] = prefix[b-1]
	}
	return v
}

// clip projects released group sums onto what sums of instances can be:
// 0 ≤ Positives, Expected ≤ Size, and, when minExpected > 0 and the
// group holds at least 2·minExpected instances, minExpected ≤ E_1, E_0.
func clip(g *Group, minExpected float64) {
	g.Size = max(g.Size, 0)
	g.Positives = min(max(g.Positives, 0), g.Size)
	lo := 0.0
	if minExpected > 0 && g.Size >= 2*minExpected {
		lo = minExpected
	}
	g.Expected = min(max(g.Expected, lo), g.Size-lo)
}

// debiased returns DebiasedStatistic with Config.Debias's V_g.
func debiased(src roc.Source, groups []Group, grid bool) (float64, error) {
	ns, ok := src.(NoiseSource)
	if !ok {
		return 0, fmt.Errorf("hosmer: debiasing needs the noise variances of the release (a NoiseSource)")
	}
	v := make([]float64, len(groups))
	for k, g := range groups {
		vy, err := ns.RangeVariance(core.Label, g.First-1, g.Last)
		if err != nil {
			return 0, err
		}
		other, weight := core.Probability, 1.0
		if grid {
			m := g.Expected / g.Size
			other, vy, weight = core.NotLabel, vy*(1-m)*(1-m), m*m
		}
		vo, err := ns.RangeVariance(other, g.First-1, g.Last)
		if err != nil {
			return 0, err
		}
		v[k] = vy + weight*vo
	}
	return DebiasedStatistic(groups, v)
}

// gridPrefixes returns the count and expected-positive prefixes at bounds
// implied by the ECDF f of n instances: per-bin counts ĉ_i = n·(f_i −
// f_{i−1}), weighted by the bins' centre probabilities for E_1. On a
// smoothed (non-decreasing) f every ĉ_i ≥ 0, so 0 ≤ E_1 ≤ size.
func gridPrefixes(f []float64, n float64, centers []float64, bounds []int) (sizes, expected []float64) {
	sizes, expected = make([]float64, len(bounds)), make([]float64, len(bounds))
	var e, prev float64
	i := 0
	for k, b := range bounds {
		for ; i < b; i++ {
			e += n * (f[i] - prev) * centers[i]
			prev = f[i]
		}
		sizes[k], expected[k] = n*f[b-1], e
	}
	return sizes, expected
}

// classPrefixes returns the counts Label + NotLabel and the positives at
// every bin, each class's prefix curve smoothed on its own (normalised by
// its released total, at least one instance) and scaled back so that the
// two totals add up to the public n.
func classPrefixes(src roc.Source, bins int, n float64, smooth roc.Smoother) (counts, pos []float64, err error) {
	var classes [2][]float64
	var totals [2]float64
	for k, c := range []core.Component{core.Label, core.NotLabel} {
		raw, err := src.Prefixes(c, allBins(bins))
		if err != nil {
			return nil, nil, fmt.Errorf("hosmer: %v: %w", c, err)
		}
		total := max(raw[bins-1], 1)
		for i := range raw {
			raw[i] /= total
		}
		if classes[k], err = smooth(raw); err != nil {
			return nil, nil, fmt.Errorf("hosmer: smoothing the %v prefixes: %w", c, err)
		}
		totals[k] = total
	}
	scale := n / (totals[0] + totals[1])
	for k := range classes {
		for i := range classes[k] {
			classes[k][i] *= totals[k] * scale
		}
	}
	counts = make([]float64, bins)
	for i := range counts {
		counts[i] = classes[0][i] + classes[1][i]
	}
	return counts, classes[0], nil
}

// countPrefixes returns the released counts at bins, from Count or as
// Label + NotLabel.
func countPrefixes(src roc.Source, bins []int, fromLabels bool) ([]float64, error) {
	if !fromLabels {
		c, err := src.Prefixes(core.Count, bins)
		if err != nil {
			return nil, fmt.Errorf("hosmer: counts: %w", err)
		}
		return c, nil
	}
	pos, err := src.Prefixes(core.Label, bins)
	if err != nil {
		return nil, fmt.Errorf("hosmer: positives: %w", err)
	}
	neg, err := src.Prefixes(core.NotLabel, bins)
	if err != nil {
		return nil, fmt.Errorf("hosmer: negatives: %w", err)
	}
	sum := make([]float64, len(pos))
	for i := range pos {
		sum[i] = pos[i] + neg[i]
	}
	return sum, nil
}

func allBins(n int) []int {
	b := make([]int, n)
	for i := range b {
		b[i] = i + 1
	}
	return b
}
