package local

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/server"
)

// TestAdditiveRequeriesStayExact: queries that ask a release again at
// overlapping prefixes (as ECDF, ROC and Hosmer–Lemeshow queries do)
// stay exact at ε = 2^48, and every party made exactly its two uploads:
// no party is online for a query.
func TestAdditiveRequeriesStayExact(t *testing.T) {
	const eps = 1 << 48
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, 32)
	ps := randomParties(t, 30, g, 5)
	l := deploy(t, "additive", 32, ps, 4*eps)
	comps := componentsOf("additive")
	rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 32, Epsilon: eps}, Components: comps})
	if err != nil {
		t.Fatal(err)
	}
	batches := [][]int{{4, 8, 16}, {8, 16, 32}, {1, 4, 8, 16, 31, 32}, {8}}
	for _, c := range comps {
		for _, prefixes := range batches {
			res, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: c, Prefixes: prefixes})
			if err != nil {
				t.Fatalf("%v at %v: %v", c, prefixes, err)
			}
			if want := exactSums(ps, c, prefixes); !slices.Equal(res.Sums, want) {
				t.Errorf("%v at %v: got %v, want %v", c, prefixes, res.Sums, want)
			}
		}
	}
	for k := range ps {
		if got := l.Network.Stats(partyPeer(k)).Calls; got != 2 {
			t.Fatalf("party %d made %d calls, want its 2 uploads", k, got)
		}
	}
}

// TestAdditiveRefusesProbability: the verified reports carry no
// probability, so a release of it is refused by the policy, nothing
// charged.
func TestAdditiveRefusesProbability(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 8)
	l := deploy(t, "additive", 8, randomParties(t, 5, g, 1), 10)
	_, err := l.NewRelease(context.Background(), aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 8, Epsilon: 1}, Components: allComponents})
	if !errors.Is(err, server.ErrPolicy) {
		t.Fatalf("probability release on the additive backend: %v, want %v", err, server.ErrPolicy)
	}
}

// TestMaliciousPartiesDoNotMoveTheRelease: K malicious parties upload
// invalid reports of every kind; both servers reject each, for the same
// reason, and a release at ε = 2^48 over honest + malicious reports is
// the honest-only release, over the honest n.
func TestMaliciousPartiesDoNotMoveTheRelease(t *testing.T) {
	const eps, bins, honest = 1 << 48, 16, 40
	kinds := verify.Forgeries()
	malicious := 3 * len(kinds)
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	ps := randomParties(t, honest, g, 9)
	l, err := New(ctx, Config{Backend: "additive", Dataset: "test", Bins: bins, Budget: ledger.Budget{Epsilon: 4 * eps}, MinReports: 1, Malicious: malicious, Rand: rand.New(rand.NewPCG(1, 2))}, ps)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, k := range kinds {
		want[verify.Reason(k.Want)] += malicious / len(kinds)
	}
	for name, srv := range map[string]*server.Server{"leader": l.Leader, "helper": l.Helper} {
		got, err := srv.Rejected("test")
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s rejected %v, want %v", name, got, want)
		}
	}
	comps := componentsOf("additive")
	rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: eps}, Components: comps})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Reports != honest {
		t.Errorf("release over %d reports, want the %d honest ones", rel.Reports, honest)
	}
	all := make([]int, bins)
	for i := range all {
		all[i] = i + 1
	}
	for _, c := range comps {
		res, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: c, Prefixes: all})
		if err != nil {
			t.Fatal(err)
		}
		if want := exactSums(ps, c, all); !slices.Equal(res.Sums, want) {
			t.Errorf("%v over honest + malicious: %v, want the honest-only %v", c, res.Sums, want)
		}
	}
}
