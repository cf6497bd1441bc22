package ecdf_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf"
)

// Example bins ages on a public grid, computes the exact ECDF and reads
// quantiles from it with the binary search of dp-ecdf Algorithm 1. A
// private release replaces ecdf.ECDF(hist) by
// ecdf.NewPrivate(mechanism, hist, seed) and its smoothed curve.
func Example() {
	ages := []float64{23, 35, 35, 41, 52, 29, 64, 33, 47, 38}
	grid, err := ecdf.NewLinearGrid(18, 98, 80) // τ_i = 18 + i: one bin per year
	if err != nil {
		panic(err)
	}
	bins, clamped, err := grid.BinAll(ages, false)
	if err != nil {
		panic(err)
	}
	hist, err := ecdf.Histogram(bins, grid.Len())
	if err != nil {
		panic(err)
	}
	f := ecdf.ECDF(hist)
	median, err := ecdf.Quantile(ecdf.CurveAt(f), grid, 0.5)
	if err != nil {
		panic(err)
	}
	i, _ := grid.Bin(40)
	fmt.Printf("clamped %d; F(40) = %.1f; median %g\n", clamped, f[i-1], median)
	// Output: clamped 0; F(40) = 0.6; median 35
}
