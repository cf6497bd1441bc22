package stattest

import (
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// NibbleLimit is the χ² quantile with 15 degrees of freedom exceeded with
// probability 2.5·10⁻⁷ (numerical integration of the density).
const NibbleLimit = 60

// NibbleChiSquare returns Pearson's χ² statistic of the hypothesis that
// the counts h of the 16 nibble values are uniform.
func NibbleChiSquare(h [16]int) float64 {
	var obs, exp [16]float64
	for i, c := range h {
		obs[i] = float64(c)
	}
	floats.AddConst(floats.Sum(obs[:])/16, exp[:])
	return stat.ChiSquare(obs[:], exp[:])
}
