package ui_test

import (
	"fmt"
	"os"

	"github.com/fedecdf/fedecdf/internal/ui"
)

// A query hosmer --format json file, opened as the file page opens it,
// and its groups downloaded as CSV.
func ExampleReadFile() {
	res, err := ui.ReadFile("hosmer.json", []byte(`{"plan": "grid", "epsilon": 1, "delta": 0,
		"guarantee": "(ε=1, δ=0)-DP under replace neighbours",
		"groups": [{"first_bin": 1, "last_bin": 4, "size": 40, "observed": 9, "expected": 10},
		           {"first_bin": 5, "last_bin": 8, "size": 60, "observed": 41, "expected": 40}],
		"statistic": 0.21, "p_value_naive": null, "p_value_private": null,
		"p_value_private_se": null, "bootstrap_draws": 0}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Hosmer.Plan, len(res.Hosmer.Groups), "groups; ECDF:", res.ECDF != nil)
	if err := res.CSV(os.Stdout, "calibration"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// grid 2 groups; ECDF: false
	// group,first_bin,last_bin,size,observed,expected,observed_sd,rate_half_width_95
	// 1,1,4,40,9,10,,
	// 2,5,8,60,41,40,,
}
