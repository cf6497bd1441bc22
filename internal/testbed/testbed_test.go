package testbed

import (
	"context"
	"errors"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/server"
)

// TestLocalPolicy: both servers of a Deployment run its
// Config.Policy: by default replace-one, so an add/remove release
// is refused; with Policy.Relation = AddRemove it is created, and a
// replace-one one refused.
func TestLocalPolicy(t *testing.T) {
	const bins = 8
	g, err := ecdf.NewLinearGrid(0, 1, bins)
	if err != nil {
		t.Fatal(err)
	}
	ps := randomParties(t, 5, g, 3)
	for _, backend := range []string{"additive", "dcf"} {
		for _, rel := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
			cfg := Config{Backend: backend, Dataset: "test", Bins: bins, Budget: ledger.Budget{Epsilon: 10}, Policy: server.Policy{Relation: rel}, MinReports: 1}
			l, err := New(context.Background(), cfg, ps)
			if err != nil {
				t.Fatal(err)
			}
			for _, asked := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
				_, err := l.NewRelease(context.Background(), aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1, Relation: asked}})
				if refused := errors.Is(err, server.ErrPolicy); refused != (asked != rel) || err != nil && !refused {
					t.Errorf("%s backend, %s dataset: a %s release: %v", backend, rel, asked, err)
				}
			}
		}
	}
}
