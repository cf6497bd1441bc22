package local

import (
	"context"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// TestAdditiveRequeriesStayExact: honest batches that ask a release again
// at overlapping prefixes (as ECDF, ROC and Hosmer–Lemeshow queries do)
// stay exact at ε = 2^48 though each server answers a prefix from the
// share set it first answered it from; and every party sent its shares
// from its own peer, the one it enrolled from (else they are refused).
func TestAdditiveRequeriesStayExact(t *testing.T) {
	const eps = 1 << 48
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, 32)
	ps := randomParties(t, 30, g, 5)
	l := deploy(t, "additive", 32, ps, 4*eps)
	rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 32, Epsilon: eps}, Components: allComponents})
	if err != nil {
		t.Fatal(err)
	}
	batches := [][]int{{4, 8, 16}, {8, 16, 32}, {1, 4, 8, 16, 31, 32}, {8}}
	for _, c := range []aggregation.Component{aggregation.Count, aggregation.Probability} {
		for _, prefixes := range batches {
			res, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: c, Prefixes: prefixes})
			if err != nil {
				t.Fatalf("%v at %v: %v", c, prefixes, err)
			}
			for j, want := range exactSums(ps, c, prefixes) {
				if res.Sums[j] != want {
					t.Errorf("%v, prefix %d: got %d, want %d", c, prefixes[j], res.Sums[j], want)
				}
			}
		}
	}
	// Enrolment (2 calls) and 2·len(batches) share vectors per component.
	wantCalls := int64(2 + 2*2*len(batches))
	for k := range ps {
		if got := l.Network.Stats(partyPeer(k)).Calls; got != wantCalls {
			t.Fatalf("party %d made %d calls from its own peer, want %d", k, got, wantCalls)
		}
	}
}
