package stattest_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/internal/stattest"
)

func ExampleNibbleChiSquare() {
	var uniform, skewed [16]int
	for i := range uniform {
		uniform[i] = 100
		skewed[i] = 100
	}
	skewed[0], skewed[1] = 200, 0
	fmt.Printf("%.1f %v\n", stattest.NibbleChiSquare(uniform), stattest.NibbleChiSquare(uniform) <= stattest.NibbleLimit)
	fmt.Printf("%.1f %v\n", stattest.NibbleChiSquare(skewed), stattest.NibbleChiSquare(skewed) <= stattest.NibbleLimit)
	// Output:
	// 0.0 true
	// 200.0 false
}
