package stattest

import (
	"math"

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

// Regression returns Pearson's correlation r of x and y, the
// least-squares slope of y on x and the slope's standard error: the
// statistics of the timing-correlation tests of fixed-work noise draws
// (packages noise, mechanism, hierarchy). Under independence r has
// standard error about 1/√n.
func Regression(x, y []float64) (r, slope, slopeSE float64) {
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/float64(len(x)), my/float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
	}
	slope = sxy / sxx
	return sxy / math.Sqrt(sxx*syy), slope, math.Sqrt((syy - slope*sxy) / float64(len(x)-2) / sxx)
}
