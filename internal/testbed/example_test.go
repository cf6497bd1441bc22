package testbed_test

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/testbed"
	"github.com/fedecdf/fedecdf/party"
)

// Eight parties upload DCF keys once; the two servers then answer a
// batch of prefix counts alone. At ε = 2^48 the noise is zero with
// overwhelming probability, so the exact counts show through; at a real ε
// each server adds its own full-scale noise.
func ExampleNew() {
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, 8)
	var parties []*party.Party
	for _, s := range []float64{0.05, 0.1, 0.3, 0.35, 0.5, 0.6, 0.9, 1} {
		p, err := party.New(party.Instance{Score: s, Label: 1}, g)
		if err != nil {
			panic(err)
		}
		parties = append(parties, p)
	}
	l, err := testbed.New(ctx, testbed.Config{
		Backend: "dcf", Dataset: "demo", Bins: 8, Budget: mechanism.Budget{Epsilon: 1 << 48}, MinReports: 5,
	}, parties)
	if err != nil {
		panic(err)
	}
	rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 8, Epsilon: 1 << 48}})
	if err != nil {
		panic(err)
	}
	res, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: core.Count, Prefixes: []int{1, 2, 4, 8}})
	if err != nil {
		panic(err)
	}
	fmt.Println("counts", res.Sums, "over", rel.Reports, "reports from", rel.Servers, "servers")
	fmt.Println("party upload bytes:", l.Cost().BytesPerParty)
	// Output:
	// counts [2 2 5 8] over 8 reports from 2 servers
	// party upload bytes: 652
}
