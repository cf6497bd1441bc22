package server

import (
	"context"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
)

// analystView is everything a curious analyst learns of the report count
// n from creating one release and querying every prefix of each of its
// components: the Reports fields of the leader's answers.
type analystView struct {
	created int   // ReleaseCreated.Reports
	answers []int // Answer.Reports, per component
}

// viewOf uploads one party per score, then plays the analyst: a release
// of comps under relation, and a query of every prefix of each
// component. The leader's answers succeed only if the helper told it n
// (the leader checks it against its own); viewOf also asks the helper, as
// the leader, for the first component, and returns the n it told.
func viewOf(t *testing.T, backend Backend, relation mechanism.Relation, scores []float64, comps ...payload.Component) (view analystView, helperTold int) {
	t.Helper()
	ctx := context.Background()
	p := newPairOf(t, Dataset{Name: "d", Backend: backend, Unverified: backend == DCF, Bins: bins, Budget: ledger.Budget{Epsilon: 1 << 50}, MinReports: 1, Policy: Policy{Relation: relation}}, nil)
	parties := make([]*party.Party, len(scores))
	for k, x := range scores {
		parties[k] = newParty(t, x)
		join := parties[k].UploadKeys
		if backend == Additive {
			join = parties[k].UploadVerified
		}
		if err := join(ctx, p.servers); err != nil {
			t.Fatal(err)
		}
	}
	id, _ := payload.NewID()
	create := &protocol.CreateRelease{Dataset: "d", Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1, Relation: relation}, Components: comps}
	created, err := protocol.Call[*protocol.ReleaseCreated](ctx, p.net.Conn("analyst"), "leader", create)
	if err != nil {
		t.Fatal(err)
	}
	view.created = created.Reports
	all := make([]int, bins)
	for i := range all {
		all[i] = i + 1
	}
	for j, c := range comps {
		q := &protocol.Query{Dataset: "d", Release: id, Component: c, Prefixes: all}
		ans, err := protocol.Call[*protocol.Answer](ctx, p.net.Conn("analyst"), "leader", q)
		if err != nil {
			t.Fatalf("%v query (the leader checks the helper's n against its own): %v", c, err)
		}
		view.answers = append(view.answers, ans.Reports)
		if j == 0 {
			ans, err := protocol.Call[*protocol.Answer](ctx, p.net.Conn("leader"), "helper", q)
			if err != nil {
				t.Fatal(err)
			}
			helperTold = ans.Reports
		}
	}
	return view, helperTold
}

// TestAnalystLearnsNoExactCountUnderAddRemove plays a curious analyst on
// an add/remove deployment: it creates a release and queries it, on a
// data set D and on D plus one record. Under add/remove n itself tells D
// from D + x, so neither the leader's ReleaseCreated nor its Answers may
// carry it: the analyst's view must be identical (all zero) on both. The
// helper still tells the leader n (the servers know it; the leader checks
// it). Under replace-one n is public and is told as before.
func TestAnalystLearnsNoExactCountUnderAddRemove(t *testing.T) {
	d := []float64{0.1, 0.3, 0.3, 0.6, 0.9}
	dPlusX := append(slices.Clone(d), 0.5)
	for _, c := range []struct {
		name     string
		backend  Backend
		relation mechanism.Relation
		comps    []payload.Component
	}{
		{"dcf count", DCF, mechanism.AddRemove, []payload.Component{payload.Count}},
		{"dcf roc pair", DCF, mechanism.AddRemove, []payload.Component{payload.Label, payload.NotLabel}},
		{"additive count", Additive, mechanism.AddRemove, []payload.Component{payload.Count}},
		{"dcf count, replace-one", DCF, mechanism.ReplaceOne, []payload.Component{payload.Count}},
		{"additive roc pair, replace-one", Additive, mechanism.ReplaceOne, []payload.Component{payload.Label, payload.NotLabel}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, data := range [][]float64{d, dPlusX} {
				view, helperTold := viewOf(t, c.backend, c.relation, data, c.comps...)
				n := len(data)
				want := analystView{created: n, answers: slices.Repeat([]int{n}, len(c.comps))}
				if c.relation == mechanism.AddRemove {
					want = analystView{answers: make([]int, len(c.comps))}
				}
				if view.created != want.created || !slices.Equal(view.answers, want.answers) {
					t.Errorf("n = %d: the analyst saw Reports %d at creation and %v in the answers, want %d and %v", n, view.created, view.answers, want.created, want.answers)
				}
				if helperTold != n {
					t.Errorf("n = %d: the helper told the leader %d reports", n, helperTold)
				}
			}
		})
	}
}

// TestMinimumReportsErrorHidesCountUnderAddRemove: a release refused for
// too few reports does not tell the analyst how many there are under
// add/remove (the refusal reads the same on D and D + x); under
// replace-one it does, n being public.
func TestMinimumReportsErrorHidesCountUnderAddRemove(t *testing.T) {
	for _, c := range []struct {
		relation mechanism.Relation
		same     bool
	}{{mechanism.AddRemove, true}, {mechanism.ReplaceOne, false}} {
		t.Run(c.relation.String(), func(t *testing.T) {
			var errs []string
			for _, n := range []int{2, 3} {
				p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 10}, MinReports: 5, Policy: Policy{Relation: c.relation}}, nil)
				for range n {
					if err := newParty(t, 0.5).UploadKeys(context.Background(), p.servers); err != nil {
						t.Fatal(err)
					}
				}
				id := payload.ReleaseID{0x42} // the errors name it
				msg := &protocol.CreateRelease{Dataset: "d", Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1, Relation: c.relation}, Components: []payload.Component{payload.Count}}
				_, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", msg)
				if err == nil {
					t.Fatalf("release over %d of at least 5 reports accepted", n)
				}
				errs = append(errs, err.Error())
			}
			if (errs[0] == errs[1]) != c.same {
				t.Errorf("refusals on 2 and 3 reports:\n%s\n%s\nwant them equal: %v", errs[0], errs[1], c.same)
			}
		})
	}
}
