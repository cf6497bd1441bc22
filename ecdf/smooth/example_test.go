package smooth_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/smooth"
)

func ExamplePointwiseL2() {
	raw := []float64{-0.02, 0.31, 0.27, 0.64, 1.03}
	fmt.Printf("%.2f\n", smooth.PointwiseL2(raw))
	// Output: [0.00 0.29 0.29 0.64 1.00]
}
