package roc_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/roc"
)

// Six instances on a grid of four score bins: positives in bins 2, 4, 4
// and negatives in bins 1, 2, 3. Exact prefix sums give the true curve;
// released (noisy) prefix sums go through the same call with a smoother.
func ExampleFromPrefixes() {
	pos, neg, err := roc.ExactPrefixes([]int{2, 4, 4, 1, 2, 3}, []int{1, 1, 1, 0, 0, 0}, 4)
	if err != nil {
		panic(err)
	}
	c, err := roc.FromPrefixes(pos, neg, nil)
	if err != nil {
		panic(err)
	}
	for i := range c.TPR {
		fmt.Printf("threshold %d: FPR %.3f TPR %.3f\n", i, c.FPR[i], c.TPR[i])
	}
	fmt.Printf("AUC %.4f\n", c.AUC())
	// Output:
	// threshold 0: FPR 1.000 TPR 1.000
	// threshold 1: FPR 0.667 TPR 1.000
	// threshold 2: FPR 0.333 TPR 0.667
	// threshold 3: FPR 0.000 TPR 0.667
	// threshold 4: FPR 0.000 TPR 0.000
	// AUC 0.8333
}
