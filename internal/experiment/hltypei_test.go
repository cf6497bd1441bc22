package experiment

import (
	"context"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
)

// TestHLTypeIShape runs the machinery on a tiny setting: one figure per
// plan, three tests per model, the non-private test identical across
// plans (same data sets), rates in [0, 1].
func TestHLTypeIShape(t *testing.T) {
	s := hlSetup{sizes: []int{1500}, draws: 9, epsilons: []float64{1, 4}, plans: []string{"grid", "paper"}}
	figs, err := hlTypeI(context.Background(), Config{Runs: 2, Seed: 3}, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].ID != "hl-typeI-n1500" || figs[1].ID != "hl-typeI-paper-n1500" {
		t.Fatalf("figures %v", figs)
	}
	for _, f := range figs {
		if len(f.Series) != len(hlModels)*len(hlTests) {
			t.Fatalf("%s: %d series", f.ID, len(f.Series))
		}
		for _, se := range f.Series {
			if len(se.X) != len(s.epsilons) || len(se.Y) != len(s.epsilons) || len(se.StdErr) != len(s.epsilons) {
				t.Fatalf("%s %s: %d/%d/%d points", f.ID, se.Name, len(se.X), len(se.Y), len(se.StdErr))
			}
			for _, y := range se.Y {
				if y < 0 || y > 1 {
					t.Fatalf("%s %s: rate %v", f.ID, se.Name, y)
				}
			}
		}
	}
	for k := 2; k < len(figs[0].Series); k += len(hlTests) {
		a, b := figs[0].Series[k], figs[1].Series[k]
		for j := range a.Y {
			if a.Y[j] != b.Y[j] {
				t.Errorf("%s: non-private rate %v (grid) ≠ %v (paper) on the same data sets", a.Name, a.Y[j], b.Y[j])
			}
		}
	}
}

// TestTwoServersNoise checks that twoServers releases say two servers
// and that their answers' noise has twice the mechanism's variance.
func TestTwoServersNoise(t *testing.T) {
	const bins = 16
	g, err := ecdf.NewLinearGrid(0, 1, bins)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := party.New(party.Instance{Score: 0.5}, g)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCurator([]*party.Party{pt}, bins)
	if err != nil {
		t.Fatal(err)
	}
	u := &twoServers{Curator: c, extra: map[payload.ReleaseID]map[core.Component]mechanism.Release{}}
	spec := aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "kary", Bins: bins, Epsilon: 1, Relation: mechanism.ReplaceOne}}
	const reps = 4000
	var sum, sq float64
	var want float64
	for range reps {
		rel, err := u.NewRelease(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Servers != 2 {
			t.Fatalf("Servers = %d", rel.Servers)
		}
		res, err := u.Sum(context.Background(), aggregation.Query{Release: rel, Component: core.Count, Prefixes: []int{bins}})
		if err != nil {
			t.Fatal(err)
		}
		v := float64(res.Sums[0] - 1)
		sum, sq = sum+v, sq+v*v
		want = res.Variance(0)
	}
	if want <= 0 {
		t.Fatalf("release variance %v", want)
	}
	mean := sum / reps
	got := sq/reps - mean*mean
	// The sample variance of 4000 draws is within ±15 % of the truth
	// with overwhelming probability for these light-tailed laws
	// (s.e. ≈ √(2/4000) ≈ 2.2 % for a normal, a few times that here).
	if got < 0.85*want || got > 1.15*want {
		t.Errorf("noise variance %.3g, want %.3g (2 servers)", got, want)
	}
}
