package curator_test

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/party"
)

// A trusted curator sees every instance and adds the mechanism's noise
// once. At ε = 10^6 the node scales round up to the finest the exact
// samplers represent and the noise is zero with overwhelming
// probability, so the exact prefix counts show through; the release is
// charged to the curator's ledger (in memory: nil), and a second release
// finds the budget spent.
func ExampleNew() {
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, 4)
	var parties []*party.Party
	for _, s := range []float64{0.1, 0.3, 0.35, 0.9} {
		p, err := party.New(party.Instance{Score: s, Label: 1}, g)
		if err != nil {
			panic(err)
		}
		parties = append(parties, p)
	}
	c, err := curator.New("scores", 4, parties, mechanism.Budget{Epsilon: 1e6}, nil)
	if err != nil {
		panic(err)
	}
	rel, err := c.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "kary", Bins: 4, Epsilon: 1e6}})
	if err != nil {
		panic(err)
	}
	res, err := c.Sum(ctx, aggregation.Query{Release: rel, Component: core.Count, Prefixes: []int{1, 2, 3, 4}})
	if err != nil {
		panic(err)
	}
	fmt.Println("prefix counts", res.Sums, "over", rel.Reports, "reports")
	_, err = c.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "kary", Bins: 4, Epsilon: 1}})
	fmt.Println("a second release refused:", err != nil)
	// Output:
	// prefix counts [1 3 3 4] over 4 reports
	// a second release refused: true
}
