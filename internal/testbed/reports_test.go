package testbed

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/server"
)

// deployUnder deploys a dataset under the neighbouring relation r.
func deployUnder(t testing.TB, backend string, bins int, n int, r mechanism.Relation) *Deployment {
	t.Helper()
	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	l, err := New(context.Background(), Config{Backend: backend, Dataset: "test", Bins: bins, Budget: ledger.Budget{Epsilon: 100}, MinReports: 1, Policy: server.Policy{Relation: r}}, randomParties(t, n, g, 11))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestAnalystSeesNoExactCountUnderAddRemove plays the analyst of a
// deployment, on D (20 records) and on D + one record, with every
// backend: under add/remove the releases it creates — and, over the
// servers, reopens — tell it no report count (Reports is 0 on both), and
// its ECDF is normalised by the noisy total, the Count prefix N; the
// {Label, NotLabel} pair by the sum of its prefixes N. Under replace-one
// Reports is n and the normaliser n, public.
func TestAnalystSeesNoExactCountUnderAddRemove(t *testing.T) {
	const bins = 8
	ctx := context.Background()
	all := []int{1, 2, 3, 4, 5, 6, 7, 8}
	for _, backend := range []string{"plain", "additive", "dcf"} {
		for _, r := range []mechanism.Relation{mechanism.AddRemove, mechanism.ReplaceOne} {
			t.Run(backend+"/"+r.String(), func(t *testing.T) {
				for _, n := range []int{20, 21} {
					l := deployUnder(t, backend, bins, n, r)
					p := mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1, Relation: r}
					count, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: p})
					if err != nil {
						t.Fatal(err)
					}
					pair, err := l.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: p, Components: []core.Component{core.Label, core.NotLabel}})
					if err != nil {
						t.Fatal(err)
					}
					wantReports := n
					if r == mechanism.AddRemove {
						wantReports = 0
					}
					if count.Reports != wantReports || pair.Reports != wantReports {
						t.Errorf("n = %d: the analyst's releases say %d and %d reports, want %d", n, count.Reports, pair.Reports, wantReports)
					}
					if client, ok := l.UStat.(*remote.Client); ok && backend == "dcf" {
						again, err := client.OpenRelease(ctx, count.ID, []core.Component{core.Count})
						if err != nil || again.Reports != wantReports {
							t.Errorf("n = %d: the reopened release says %d reports (%v), want %d", n, again.Reports, err, wantReports)
						}
					}
					var totals []int64
					for _, c := range []core.Component{core.Count, core.Label, core.NotLabel} {
						rel := count
						if c != core.Count {
							rel = pair
						}
						res, err := l.Sum(ctx, aggregation.Query{Release: rel, Component: c, Prefixes: all})
						if err != nil {
							t.Fatal(err)
						}
						totals = append(totals, res.Sums[bins-1])
					}
					for k, c := range []struct {
						rel   *aggregation.Release
						noisy int64
					}{{count, totals[0]}, {pair, totals[1] + totals[2]}} {
						got, err := c.rel.Normaliser(c.noisy)
						if err != nil {
							t.Fatal(err)
						}
						want := ecdf.Normaliser{N: int64(n), Public: true}
						if r == mechanism.AddRemove {
							want = ecdf.Normaliser{N: max(c.noisy, 1)}
						}
						if got.N != want.N || got.Public != want.Public {
							t.Errorf("n = %d, release %d: normaliser %+v, want %+v", n, k, got, want)
						}
					}
				}
			})
		}
	}
}

// TestLocalRefusesOtherRelation: a Deployment refuses a release
// under another neighbouring relation than its dataset's, whose stated
// guarantee — and what it tells of n — would not be the dataset's.
func TestLocalRefusesOtherRelation(t *testing.T) {
	for _, c := range []struct {
		dataset, release mechanism.Relation
		ok               bool
	}{
		{mechanism.ReplaceOne, mechanism.ReplaceOne, true},
		{mechanism.ReplaceOne, mechanism.AddRemove, false},
		{mechanism.AddRemove, mechanism.ReplaceOne, false},
		{mechanism.AddRemove, mechanism.AddRemove, true},
	} {
		t.Run(c.dataset.String()+"/"+c.release.String(), func(t *testing.T) {
			l := deployUnder(t, "plain", 4, 3, c.dataset)
			_, err := l.NewRelease(context.Background(), aggregation.ReleaseSpec{Mechanism: mechanism.Params{Bins: 4, Epsilon: 1, Relation: c.release}})
			if (err == nil) != c.ok || (err != nil && (!errors.Is(err, server.ErrPolicy) || !strings.Contains(err.Error(), "the dataset is released under "+c.dataset.String()))) {
				t.Errorf("release under %s on a %s dataset: %v", c.release, c.dataset, err)
			}
		})
	}
}
