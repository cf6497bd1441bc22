package noise_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// Discrete Laplace noise of scale Δ/ε for a count of sensitivity Δ = 1
// at ε = 0.5, drawn from the stream of one noise node of a release seed:
// the same seed and node always give the same value.
func ExampleDiscreteLaplace() {
	d, err := noise.NewDiscreteLaplace(1 / 0.5)
	if err != nil {
		fmt.Println(err)
		return
	}
	var seed noise.Seed // in production: noise.NewSeed()
	a := d.Sample(seed.Stream(1, 42))
	b := d.Sample(seed.Stream(1, 42))
	fmt.Printf("scale %g, variance %.4f (continuous Laplace: %g)\n", d.Scale(), d.Variance(), 2*d.Scale()*d.Scale())
	fmt.Println("reproducible:", a == b)
	// Output:
	// scale 2, variance 7.8354 (continuous Laplace: 8)
	// reproducible: true
}

// Discrete Gaussian noise N_Z(0, σ²) drawn from a fresh secret seed; for
// σ ≥ 1 its variance equals σ² to many digits.
func ExampleDiscreteGaussian() {
	g, err := noise.NewDiscreteGaussian(2.25)
	if err != nil {
		fmt.Println(err)
		return
	}
	seed, err := noise.NewSeed()
	if err != nil {
		fmt.Println(err)
		return
	}
	x := g.Sample(seed.Stream(1, 0))
	fmt.Printf("σ² = %g, variance %.6f, draw is an integer: %T\n", g.Sigma2(), g.Variance(), x)
	// Output:
	// σ² = 2.25, variance 2.250000, draw is an integer: int64
}
