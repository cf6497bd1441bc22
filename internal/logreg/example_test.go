package logreg_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/internal/logreg"
)

func ExampleFit() {
	// Hours studied and whether the exam was passed. (An independent Newton
	// solve of the same objective gives b = −2.523, w = 0.918.)
	hours := [][]float64{{0.5}, {1}, {1.5}, {2}, {2.5}, {3}, {3.5}, {4}, {4.5}, {5}}
	passed := []int{0, 0, 0, 1, 0, 1, 0, 1, 1, 1}
	model, err := logreg.Fit(hours, passed, logreg.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("P(pass | 1 hour)  = %.2f\n", model.Predict([]float64{1}))
	fmt.Printf("P(pass | 4 hours) = %.2f\n", model.Predict([]float64{4}))
	// Output:
	// P(pass | 1 hour)  = 0.17
	// P(pass | 4 hours) = 0.76
}
