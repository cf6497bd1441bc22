package ecdf_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
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

// ExampleNewPrivate releases the ECDF of the X_pois(10) data set with the
// tree mechanism at ε = 1 (replace-one neighbours) and reads its median.
// The seed is fresh from crypto/rand, so the noisy values differ on every
// run; only the noise-free facts are printed.
func ExampleNewPrivate() {
	// X_pois(10): 2^15 values, each held by Poisson(10) instances.
	const values = 1 << 15
	pois := distuv.Poisson{Lambda: 10, Src: rand.NewPCG(1, 0x9e3779b97f4a7c15)}
	hist := make([]int64, values)
	for v := range hist {
		hist[v] = int64(pois.Rand())
	}
	grid, err := ecdf.NewLinearGrid(0, values, values) // value v in bin v
	if err != nil {
		panic(err)
	}
	tree, err := mechanism.New(mechanism.Params{Name: "tree", Bins: grid.Len(), Epsilon: 1})
	if err != nil {
		panic(err)
	}
	seed, err := noise.NewSeed()
	if err != nil {
		panic(err)
	}
	private, err := ecdf.NewPrivate(tree, hist, seed)
	if err != nil {
		panic(err)
	}
	// F̂ is raw (not monotone); Algorithm 1 still finds a crossing. Its
	// noise, √(16·2·16²) ≈ 91 instances per prefix, is far below the
	// ~10 instances per value times the ±200 values allowed here.
	median, err := ecdf.Quantile(ecdf.CurveAt(private.Curve()), grid, 0.5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("n = %d, %d thresholds, median within 200 of 16384: %v\n",
		private.Normaliser().N, private.Bins(), median > 16384-200 && median < 16384+200)
	// Output: n = 327602, 32768 thresholds, median within 200 of 16384: true
}
