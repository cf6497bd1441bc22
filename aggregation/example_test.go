package aggregation_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// A release spec names its mechanism and the payload components it
// covers; every backend releases it in normal form: components sorted
// and listed once, the mechanism named (the paper's tree when unnamed).
func ExampleReleaseSpec_Normalize() {
	spec := aggregation.ReleaseSpec{
		Mechanism:  mechanism.Params{Bins: 256, Epsilon: 1},
		Components: []core.Component{core.NotLabel, core.Label},
	}
	s, err := spec.Normalize()
	fmt.Println(s.Mechanism.Name, s.Components, err)
	// Output: tree [label notlabel] <nil>
}
