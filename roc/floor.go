package roc

import (
	"fmt"
	"math"
)

// BinningFloor returns the expected area between the exact (unbinned)
// ROC curve of a data set and the curve through its bins' points, given
// the data set's exact prefix sums pos and neg on the grid (as
// ExactPrefixes returns them): the discretisation floor that no
// estimator reading only bin counts can go below, however little noise
// it has. With a_i positives and b_i negatives in bin i, n₊ and n₋ in
// all,
//
//	floor = (√(2π)/8) · Σ_i √(a_i·b_i·(a_i + b_i)) / (n₊·n₋)
//
// (roc/doc.go, "The discretisation floor"): within a bin the exact curve
// is the staircase of the bin's instances in score order, and when that
// order is exchangeable between the classes its deviation from the
// chord is a Brownian bridge, of mean absolute area √(2π)/8 in its own
// units. A bin holding one class only adds nothing (its exact curve is
// the straight segment).
func BinningFloor(pos, neg []float64) (float64, error) {
	if len(pos) == 0 || len(pos) != len(neg) {
		return 0, fmt.Errorf("roc: binning floor of %d positive and %d negative prefix sums (want as many, at least one)", len(pos), len(neg))
	}
	var sum, pp, pn float64
	for i := range pos {
		a, b := pos[i]-pp, neg[i]-pn
		if a < 0 || b < 0 {
			return 0, fmt.Errorf("roc: binning floor: prefix sums decrease at bin %d", i+1)
		}
		sum += math.Sqrt(a * b * (a + b))
		pp, pn = pos[i], neg[i]
	}
	if !(pp > 0 && pn > 0) {
		return 0, fmt.Errorf("roc: binning floor needs both classes (%g positives, %g negatives)", pp, pn)
	}
	return math.Sqrt(2*math.Pi) / 8 * sum / (pp * pn), nil
}
