package simulate_test

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/simulate"
)

// One in-process run: 2 000 parties holding the test-set predictions of a
// logistic regression on the built-in table, two servers with the DCF
// secure sum, and an analyst. At ε = 10^6 the noise rounds to zero with
// overwhelming probability, so the private ECDF and ROC curve equal the
// exact ones — the check to run before choosing a real ε.
func ExampleRun() {
	r, err := simulate.Run(context.Background(), simulate.Config{
		Parties: 2000, Backend: "dcf", Epsilon: 1e6, ECDFShare: 0.25, Mechanism: "auto",
		Bins: 64, Min: 0, Max: 1, Seed: 1, HosmerPlans: []string{"roc"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("parties:", r.Parties, "n public:", r.Public)
	fmt.Println("max |F̂ − F|:", r.Error.MaxAbs)
	fmt.Println("private AUC equals the true one:", r.ROC.Raw.AUC == r.True.ROC.AUC)
	// Output:
	// parties: 2000 n public: true
	// max |F̂ − F|: 0
	// private AUC equals the true one: true
}
