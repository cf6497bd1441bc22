package testbed

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/party"
)

// randomParties draws n instances with scores in [0, 1], labels and
// probabilities, from a fixed-seed simulation RNG.
func randomParties(t testing.TB, n int, g *ecdf.Grid, seed uint64) []*party.Party {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	ps := make([]*party.Party, n)
	for k := range ps {
		inst := party.Instance{Score: rng.Float64(), Label: rng.IntN(2), Probability: rng.Float64(), HasProbability: true}
		if k%7 == 0 {
			inst.Score = 1 // the last threshold itself
		}
		p, err := party.New(inst, g)
		if err != nil {
			t.Fatal(err)
		}
		ps[k] = p
	}
	return ps
}

// exactSums is Σ payload_c·1[bin ≤ i], computed directly.
func exactSums(ps []*party.Party, c core.Component, prefixes []int) []int64 {
	s := make([]int64, len(prefixes))
	for _, p := range ps {
		for j, i := range prefixes {
			if p.Bin() <= i {
				s[j] += int64(p.Payload(c))
			}
		}
	}
	return s
}

// unverifiedDCF names, in the tests' backend lists, the dcf backend run
// unverified (Config.Unverified).
const unverifiedDCF = "dcf-unverified"

// probabilityDCF names the verified dcf backend whose dataset collects
// the probability (Config.Probability).
const probabilityDCF = "dcf-probability"

// withBackend sets cfg's backend from a name of the tests' backend lists.
func withBackend(cfg Config, backend string) Config {
	cfg.Backend = backend
	switch backend {
	case unverifiedDCF:
		cfg.Backend, cfg.Unverified = "dcf", true
	case probabilityDCF:
		cfg.Backend, cfg.Probability = "dcf", true
	}
	return cfg
}

func deploy(t testing.TB, backend string, bins int, ps []*party.Party, budget float64) *Deployment {
	t.Helper()
	cfg := withBackend(Config{Dataset: "test", Bins: bins, Budget: ledger.Budget{Epsilon: budget}, MinReports: 1}, backend)
	l, err := New(context.Background(), cfg, ps)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var allComponents = []core.Component{core.Count, core.Label, core.NotLabel, core.Probability}

// componentsOf is the components a backend releases: all but the
// probability for the verified backends whose reports do not carry it.
func componentsOf(backend string) []core.Component {
	if backend == "additive" || backend == "dcf" {
		return allComponents[:3]
	}
	return allComponents
}

// TestBackendsExactWithoutNoise: at ε = 2^48 every node noise is 0 except
// with probability below 2e^{−2^15/Δ} (even for the fixed-point
// Probability component, whose mechanism runs at ε/2^33), so the three
// backends must return the exact sums for every component and grid.
func TestBackendsExactWithoutNoise(t *testing.T) {
	const eps = 1 << 48
	ctx := context.Background()
	for _, bins := range []int{1, 7, 64, 300} {
		g, err := ecdf.NewLinearGrid(0, 1, bins)
		if err != nil {
			t.Fatal(err)
		}
		ps := randomParties(t, 50, g, uint64(bins))
		prefixes := []int{1, bins}
		if bins > 2 {
			prefixes = []int{1, 2, (bins + 1) / 2, bins - 1, bins}
		}
		if bins == 1 {
			prefixes = []int{1}
		}
		for _, backend := range []string{"plain", "additive", "dcf", unverifiedDCF, probabilityDCF} {
			l := deploy(t, backend, bins, ps, 4*eps)
			comps := componentsOf(backend)
			rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: eps}, Components: comps})
			if err != nil {
				t.Fatalf("%s, %d bins: %v", backend, bins, err)
			}
			for _, c := range comps {
				res, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: c, Prefixes: prefixes})
				if err != nil {
					t.Fatalf("%s, %d bins, %v: %v", backend, bins, c, err)
				}
				want := exactSums(ps, c, prefixes)
				for j := range want {
					if res.Sums[j] != want[j] {
						t.Errorf("%s, %d bins, %v, prefix %d: got %d, want %d", backend, bins, c, prefixes[j], res.Sums[j], want[j])
					}
				}
			}
		}
	}
}

// treeNoiseMoments returns the variance and fourth cumulant of one prefix
// noise of a tree release summed over servers draws: Servers·(L+1)
// independent Lap_Z(t) node noises (the terms of a prefix), each (a
// difference of two geometric variables, r = e^{−1/t}) with
// κ2 = 2r/(1−r)² and κ4 = 2r(1+4r+r²)/(1−r)^4 = κ2·(1 + 3κ2).
func treeNoiseMoments(m mechanism.Mechanism, servers int) (variance, kappa4 float64) {
	nodes := float64(servers * len(m.Terms(1, nil)))
	k2 := m.NodeVariance()
	return nodes * k2, nodes * k2 * (1 + 3*k2)
}

// TestTwoServerNoiseVariance: over repeated releases at ε = 1, the
// released prefix minus the exact sum has the variance of two independent
// full-scale draws, 2·PrefixVariance, within 5 standard errors of the
// sample variance, √((κ4 + 2σ⁴)/R). With R = 3000 the standard error is
// about 2.9% of σ², so a single server's draw (half the variance) is 17
// standard errors away and would fail.
func TestTwoServerNoiseVariance(t *testing.T) {
	const bins, releases = 16, 3000
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	ps := randomParties(t, 10, g, 7)
	for _, tc := range []struct {
		backend string
		servers int
	}{{"dcf", 2}, {"plain", 1}} {
		l := deploy(t, tc.backend, bins, ps, releases)
		var sum, sumSq float64
		var mech mechanism.Mechanism
		for r := range releases {
			rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1}})
			if err != nil {
				t.Fatal(err)
			}
			mech = rel.Mechanism(core.Count)
			prefix := []int{1 + r%bins}
			res, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: core.Count, Prefixes: prefix})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := res.Variance(0), float64(tc.servers)*mech.PrefixVariance(prefix[0]); got != want {
				t.Fatalf("%s: stated variance %g, want %g", tc.backend, got, want)
			}
			d := float64(res.Sums[0] - exactSums(ps, core.Count, prefix)[0])
			sum += d
			sumSq += d * d
		}
		mean := sum / releases
		variance := (sumSq - releases*mean*mean) / (releases - 1)
		want, k4 := treeNoiseMoments(mech, tc.servers)
		se := math.Sqrt((k4 + 2*want*want) / releases)
		if math.Abs(variance-want) > 5*se {
			t.Errorf("%s: noise variance %.1f, want %d×PrefixVariance = %.1f ± %.1f (5 s.e.)", tc.backend, variance, tc.servers, want, 5*se)
		}
		if math.Abs(mean) > 5*math.Sqrt(want/releases) {
			t.Errorf("%s: noise mean %.2f, want 0 ± %.2f", tc.backend, mean, 5*math.Sqrt(want/releases))
		}
	}
}

// TestRequeryReusesNoise: asking a release again returns the same values
// and charges nothing more.
func TestRequeryReusesNoise(t *testing.T) {
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, 32)
	ps := randomParties(t, 20, g, 3)
	for _, backend := range []string{"plain", "additive", "dcf"} {
		l := deploy(t, backend, 32, ps, 1)
		rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 32, Epsilon: 1}})
		if err != nil {
			t.Fatal(err)
		}
		a, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: core.Count, Prefixes: []int{3, 9, 32}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: core.Count, Prefixes: []int{9}})
		if err != nil {
			t.Fatal(err)
		}
		if a.Sums[1] != b.Sums[0] {
			t.Errorf("%s: prefix 9 answered %d then %d", backend, a.Sums[1], b.Sums[0])
		}
		if _, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: 32, Epsilon: 0.5}}); err == nil {
			t.Errorf("%s: a second release beyond the budget was accepted", backend)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	ctx := context.Background()
	g, _ := ecdf.NewLinearGrid(0, 1, 8)
	l := deploy(t, "dcf", 8, randomParties(t, 5, g, 1), 10)
	rel, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Bins: 8, Epsilon: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []aggregation.Query{
		{Release: rel, Component: core.Label, Prefixes: []int{1}},
		{Release: rel, Component: core.Count, Prefixes: []int{2, 2}},
		{Release: rel, Component: core.Count, Prefixes: []int{9}},
		{Release: rel, Component: core.Count},
	} {
		if _, err := l.Sum(ctx, q); err == nil {
			t.Errorf("query %+v accepted", q)
		}
	}
	if _, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Bins: 9, Epsilon: 1}}); err == nil {
		t.Error("release over the wrong number of bins accepted")
	}
}
