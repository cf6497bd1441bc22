package party_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
)

// A party bins its score and splits its kernel values into two additive
// shares, one per server; each share alone is pseudorandom.
func ExampleParty_AdditiveShares() {
	g, _ := ecdf.NewLinearGrid(0, 1, 4) // thresholds 0.25, 0.5, 0.75, 1
	p, err := party.New(party.Instance{Score: 0.6, Label: 1}, g)
	if err != nil {
		panic(err)
	}
	prefixes := []int{1, 2, 3, 4}
	leader, helper, _ := p.AdditiveShares(payload.Label, prefixes)
	sum := make([]uint64, len(prefixes))
	for j := range sum {
		sum[j] = leader[j] + helper[j]
	}
	fmt.Println("bin", p.Bin(), "label", p.Payload(payload.Label), "shares add to", sum)
	// Output: bin 3 label 1 shares add to [0 0 1 1]
}
