package simulate

import "github.com/fedecdf/fedecdf/ecdf/smooth"

// smoothing names the post-processing applied to every private curve.
const smoothing = "isotonic (PAVA) + clip to [0,1]"

// smoothCurve post-processes a private curve (free under DP): the
// pointwise p = 2 smoothing of dp-ecdf Eq. 3 (smooth.PointwiseL2).
func smoothCurve(f []float64) ([]float64, string) { return smooth.PointwiseL2(f), smoothing }
