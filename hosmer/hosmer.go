package hosmer

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fedecdf/fedecdf/ecdf"
	"gonum.org/v1/gonum/stat/distuv"
)

// Group is one Hosmer–Lemeshow group: the instances whose predicted
// probability falls in grid bins First..Last (1-based, inclusive), with
// their number, observed positives O_1 = Σy and expected positives
// E_1 = Σp. The negatives are O_0 = Size − Positives and
// E_0 = Size − Expected.
type Group struct {
	First     int     `json:"first_bin"`
	Last      int     `json:"last_bin"`
	Size      float64 `json:"size"`
	Positives float64 `json:"observed"`
	Expected  float64 `json:"expected"`
}

// Rates returns the group's expected and observed positive rates
// E_1/size and O_1/size — a point of a calibration chart — and false when
// the group holds less than one instance (a released size can), so has
// no rate.
func (g Group) Rates() (expected, observed float64, ok bool) {
	if g.Size < 1 {
		return 0, 0, false
	}
	return g.Expected / g.Size, g.Positives / g.Size, true
}

// ErrUndefined is wrapped by the error of Statistic when a group has no
// positive expected count of positives or of negatives: H is undefined.
// On released groups this is an outcome of the noise, not a fault.
var ErrUndefined = errors.New("Hosmer–Lemeshow statistic undefined")

// Statistic returns the Hosmer–Lemeshow statistic of dp-ecdf Eq. 5,
//
//	H = Σ_g (O_1g − E_1g)²/E_1g + (O_0g − E_0g)²/E_0g.
//
// Every expected count must be positive (H is undefined otherwise: the
// error wraps ErrUndefined and names the group).
func Statistic(groups []Group) (float64, error) {
	if len(groups) == 0 {
		return 0, fmt.Errorf("hosmer: no groups")
	}
	var h float64
	for k, g := range groups {
		e1, e0 := g.Expected, g.Size-g.Expected
		o1, o0 := g.Positives, g.Size-g.Positives
		if !(e1 > 0 && e0 > 0) {
			return 0, fmt.Errorf("hosmer: %w: group %d (bins %d..%d): expected positives %v and negatives %v must both be positive", ErrUndefined, k+1, g.First, g.Last, e1, e0)
		}
		h += (o1-e1)*(o1-e1)/e1 + (o0-e0)*(o0-e0)/e0
	}
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return 0, fmt.Errorf("hosmer: statistic is %v", h)
	}
	return h, nil
}

// DebiasedStatistic returns H with the noise's expected contribution
// removed: on released groups D_g = O_1g − E_1g = −(O_0g − E_0g), so
//
//	H = Σ_g D_g²·(1/E_1g + 1/E_0g),
//
// and a noise of variance V_g in D_g adds V_g·(1/E_1g + 1/E_0g) to it on
// average (dp-ecdf §6.6's overestimates at small ε). With variances[g] =
// V_g this returns max(0, Σ_g (D_g² − V_g)·(1/E_1g + 1/E_0g)), unbiased
// for the statistic on the released denominators whenever the maximum
// does not bind. Expected counts must be positive, as for Statistic.
func DebiasedStatistic(groups []Group, variances []float64) (float64, error) {
	if len(variances) != len(groups) {
		return 0, fmt.Errorf("hosmer: %d noise variances for %d groups", len(variances), len(groups))
	}
	if _, err := Statistic(groups); err != nil {
		return 0, err
	}
	var h float64
	for k, g := range groups {
		d := g.Positives - g.Expected
		h += (d*d - variances[k]) * (1/g.Expected + 1/(g.Size-g.Expected))
	}
	return max(h, 0), nil
}

// PValue returns P(χ²_{Q−2} ≥ h), the p-value of the Hosmer–Lemeshow
// test with Q groups (dp-ecdf §5.2). It needs Q ≥ 3.
func PValue(h float64, groups int) (float64, error) {
	if groups < 3 {
		return 0, fmt.Errorf("hosmer: %d groups leave %d degrees of freedom (need at least 3 groups)", groups, groups-2)
	}
	if math.IsNaN(h) || h < 0 {
		return 0, fmt.Errorf("hosmer: statistic %v is not a non-negative number", h)
	}
	return distuv.ChiSquared{K: float64(groups - 2)}.Survival(h), nil
}

// Boundaries returns the last bins b_1 < … < b_G = N of the quantile
// groups of a curve cdf (cdf[i−1] the ECDF of the predicted
// probabilities at bin i, exact, released or smoothed): b_q is the bin
// dp-ecdf Algorithm 1 finds for q/Q (ecdf.QuantileIndex), q = 1..Q−1,
// as on line 5 of Algorithm 2. Group q is bins b_{q−1}+1..b_q (b_0 = 0):
// a partition of the grid, where Algorithm 2's closed intervals
// [t_{q−1}, t_q] would count an instance on a boundary twice. Quantiles
// falling in the same bin (ties, or a coarse grid) would give empty
// groups; they are merged, so G ≤ Q.
func Boundaries(cdf []float64, q int) ([]int, error) {
	n := len(cdf)
	if n < 1 {
		return nil, fmt.Errorf("hosmer: empty ECDF")
	}
	if q < 1 {
		return nil, fmt.Errorf("hosmer: number of groups %d is not positive", q)
	}
	f := ecdf.CurveAt(cdf)
	var bounds []int
	for k := 1; k < q; k++ {
		b, err := ecdf.QuantileIndex(f, n, float64(k)/float64(q))
		if err != nil {
			return nil, fmt.Errorf("hosmer: quantile %d/%d: %w", k, q, err)
		}
		bounds = append(bounds, b)
	}
	bounds = append(bounds, n)
	slices.Sort(bounds) // raw noisy curves may give unordered crossings
	return slices.Compact(bounds), nil
}

// FromPrefixes returns the groups ending at bounds from prefix sums at
// those bins: count[k], positives[k] and expected[k] are the sums of 1,
// y and p over the instances with bin ≤ bounds[k], exact or released.
// Each group's sums are differences of two prefixes (range sums).
func FromPrefixes(bounds []int, count, positives, expected []float64) ([]Group, error) {
	if len(bounds) == 0 || len(count) != len(bounds) || len(positives) != len(bounds) || len(expected) != len(bounds) {
		return nil, fmt.Errorf("hosmer: %d boundaries with %d, %d and %d prefix sums (want equal, at least 1)", len(bounds), len(count), len(positives), len(expected))
	}
	groups := make([]Group, len(bounds))
	first := 1
	var c0, p0, e0 float64
	for k, b := range bounds {
		if b < first {
			return nil, fmt.Errorf("hosmer: boundary %d (bin %d) does not increase", k+1, b)
		}
		groups[k] = Group{First: first, Last: b, Size: count[k] - c0, Positives: positives[k] - p0, Expected: expected[k] - e0}
		first, c0, p0, e0 = b+1, count[k], positives[k], expected[k]
	}
	return groups, nil
}

// Exact returns the groups ending at bounds computed directly from the
// instances (1-based bins, labels 0/1, predicted probabilities in
// [0, 1]): the textbook Hosmer–Lemeshow groups, the noise-free reference.
func Exact(bins, labels []int, probs []float64, bounds []int) ([]Group, error) {
	if len(bins) != len(labels) || len(bins) != len(probs) {
		return nil, fmt.Errorf("hosmer: %d bins, %d labels and %d probabilities", len(bins), len(labels), len(probs))
	}
	zeros := make([]float64, len(bounds))
	groups, err := FromPrefixes(bounds, zeros, zeros, zeros)
	if err != nil {
		return nil, err
	}
	for j, b := range bins {
		if labels[j] != 0 && labels[j] != 1 {
			return nil, fmt.Errorf("hosmer: instance #%d: label %d is not 0 or 1", j, labels[j])
		}
		if !(probs[j] >= 0 && probs[j] <= 1) {
			return nil, fmt.Errorf("hosmer: instance #%d: probability %v is not in [0, 1]", j, probs[j])
		}
		k, _ := slices.BinarySearch(bounds, b)
		if b < 1 || k == len(bounds) {
			return nil, fmt.Errorf("hosmer: instance #%d: bin %d is not in [1, %d]", j, b, bounds[len(bounds)-1])
		}
		groups[k].Size++
		groups[k].Positives += float64(labels[j])
		groups[k].Expected += probs[j]
	}
	return groups, nil
}
