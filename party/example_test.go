package party_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/party"
)

// A party bins its score and makes its one verified report: a Prio3
// histogram sharded between the two servers under its report ID.
func ExampleParty_VerifiedReport() {
	g, _ := ecdf.NewLinearGrid(0, 1, 4) // thresholds 0.25, 0.5, 0.75, 1
	p, err := party.New(party.Instance{Score: 0.6, Label: 1}, g)
	if err != nil {
		panic(err)
	}
	r, _ := p.VerifiedReport(nil)
	fmt.Println("bin", p.Bin(), "label", p.Payload(core.Label), "nonce is the report ID:", r.ID == p.ReportID())
	// Output: bin 3 label 1 nonce is the report ID: true
}
