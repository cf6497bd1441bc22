package testbed

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/server"
)

// TestVerifiedRequeriesStayExact: queries that ask a release again at
// overlapping prefixes (as ECDF, ROC and Hosmer–Lemeshow queries do)
// stay exact at ε = 2^48, and every party made exactly its two uploads:
// no party is online for a query.
func TestVerifiedRequeriesStayExact(t *testing.T) {
	for _, backend := range verifiedBackends {
		t.Run(backend, func(t *testing.T) { requeriesStayExact(t, backend) })
	}
}

func requeriesStayExact(t *testing.T, backend string) {
	const eps = 1 << 48
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, 32)
	ps := randomParties(t, 30, g, 5)
	l := deploy(t, backend, 32, ps, 4*eps)
	comps := componentsOf(backend)
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

// TestVerifiedRefusesProbability: the verified reports of a dataset that
// does not collect the probability carry none, so a release of it is
// refused by the policy, nothing charged; the additive backend cannot
// collect it at all.
func TestVerifiedRefusesProbability(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 8)
	for _, backend := range verifiedBackends {
		t.Run(backend, func(t *testing.T) {
			l := deploy(t, backend, 8, randomParties(t, 5, g, 1), 10)
			_, err := l.NewRelease(context.Background(), aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 8, Epsilon: 1}, Components: allComponents})
			if !errors.Is(err, server.ErrPolicy) {
				t.Fatalf("probability release on the %s backend: %v, want %v", backend, err, server.ErrPolicy)
			}
		})
	}
	cfg := Config{Backend: "additive", Probability: true, Dataset: "test", Bins: 8, Budget: ledger.Budget{Epsilon: 10}, MinReports: 1}
	if _, err := New(context.Background(), cfg, randomParties(t, 5, g, 1)); err == nil || !strings.Contains(err.Error(), "probability") {
		t.Errorf("additive dataset collecting the probability: %v, want a refusal naming it", err)
	}
}

// verifiedBackends are the backends whose servers verify every report.
var verifiedBackends = []string{"additive", "dcf"}

// forgeryReasons returns the rejection reasons of a verified backend's
// forgeries, in turn.
func forgeryReasons(backend string) []string {
	var reasons []string
	if backend == "additive" {
		for _, k := range verify.Forgeries() {
			reasons = append(reasons, verify.Reason(k.Want))
		}
		return reasons
	}
	s, _ := vdcf.New(2)
	if backend == probabilityDCF {
		s, _ = vdcf.NewWithProbability(2)
	}
	for _, k := range s.Forgeries() {
		reasons = append(reasons, verify.Reason(k.Want))
	}
	return reasons
}

// TestMaliciousPartiesDoNotMoveTheRelease: K malicious parties upload
// invalid reports of every kind; both servers reject each, for the same
// reason, and a release at ε = 2^48 over honest + malicious reports is
// the honest-only release, over the honest n.
func TestMaliciousPartiesDoNotMoveTheRelease(t *testing.T) {
	for _, backend := range append(verifiedBackends, probabilityDCF) {
		t.Run(backend, func(t *testing.T) { maliciousDoNotMove(t, backend) })
	}
	// Uploads verified in blocks of 7 (New verifies every verifyEvery
	// uploads): every party uploads once, in its own name.
	t.Run("blocks", func(t *testing.T) {
		defer func(n int) { verifyEvery = n }(verifyEvery)
		verifyEvery = 7
		for _, backend := range verifiedBackends {
			t.Run(backend, func(t *testing.T) { maliciousDoNotMove(t, backend) })
		}
	})
}

func maliciousDoNotMove(t *testing.T, backend string) {
	const eps, bins, honest = 1 << 48, 16, 40
	reasons := forgeryReasons(backend)
	malicious := 3 * len(reasons)
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	ps := randomParties(t, honest, g, 9)
	l, err := New(ctx, withBackend(Config{Dataset: "test", Bins: bins, Budget: ledger.Budget{Epsilon: 4 * eps}, MinReports: 1, Malicious: malicious, Rand: rand.New(rand.NewPCG(1, 2))}, backend), ps)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, r := range reasons {
		want[r] += malicious / len(reasons)
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
	comps := componentsOf(backend)
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
