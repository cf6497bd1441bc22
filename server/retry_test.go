package server

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
)

// helperRecord is the helper's stored record of rel, encoded: its seed
// (hence its noise) and its report set.
func (p *pair) helperRecord(t *testing.T, rel payload.ReleaseID) []byte {
	t.Helper()
	var rec []byte
	err := p.helper.cfg.Releases.LoadReleases("d", func(id payload.ReleaseID, b []byte) error {
		if id == rel {
			rec = b
		}
		return nil
	})
	if err != nil || rec == nil {
		t.Fatalf("the helper's record of release %v: %v", rel, err)
	}
	return rec
}

// upload has one party per score upload its DCF keys to both servers.
func (p *pair) upload(t *testing.T, scores ...float64) []*party.Party {
	t.Helper()
	parties := make([]*party.Party, len(scores))
	for j, x := range scores {
		parties[j] = newParty(t, x)
		if err := parties[j].UploadKeys(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
	}
	return parties
}

// askHelper sends the helper a release request as the leader.
func (p *pair) askHelper(m *protocol.CreateRelease) (*protocol.ReleaseCreated, error) {
	return protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("leader"), "helper", m)
}

// TestHelperAnswersRetriedRelease: the leader crashes after the helper
// recorded a release and before the leader charged and recorded it, and
// is asked for the
// same release again. The helper answers from its record — same report
// set, same noise, no second charge, even with its whole budget spent by
// that release — so the release completes over exactly the recorded
// reports, also when the leader has received more since. A retry with
// another spec, or without every recorded report, is refused: the same
// noise over another set would reveal the difference of two sums.
func TestHelperAnswersRetriedRelease(t *testing.T) {
	p := newPair(t, DCF, 1, 3, nil)
	parties := p.upload(t, 0.1, 0.5, 0.9)
	spec := mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1}
	create := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0x5e}, Mechanism: spec, Components: []payload.Component{payload.Count}}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", create); err != nil {
		t.Fatal(err)
	}
	recorded := p.helper.datasets["d"].releases[create.Release].reports
	before := p.helperRecord(t, create.Release)

	late := p.upload(t, 0.7)[0] // arrives after the release
	parties = append(parties, late)
	// The leader crashed after the helper's acknowledgement, before its
	// own charge and record: it holds the pending record it saved
	// before asking the helper. The analyst retries the same release.
	pendingOnly := newMemoryReleases()
	if err := pendingOnly.SaveRelease("d", create.Release, marshalPending(create)); err != nil {
		t.Fatal(err)
	}
	p.leader.cfg.Ledger, p.leader.cfg.Releases = ledger.NewMemory(), pendingOnly
	p.restart(t, parties)
	resp, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", create)
	if err != nil {
		t.Fatalf("retried release: %v", err)
	}
	if resp.Reports != len(recorded) {
		t.Fatalf("retried release over %d reports, want the recorded %d", resp.Reports, len(recorded))
	}
	if got := p.leader.datasets["d"].releases[create.Release].reports; !slices.Equal(got, recorded) {
		t.Fatalf("the leader's retried release is over %v, the helper's record over %v", got, recorded)
	}
	if !bytes.Equal(p.helperRecord(t, create.Release), before) {
		t.Fatal("the retry changed the helper's record (its seed or report set)")
	}
	p.noisyPrefixes(t, create.Release) // both servers answer over the same set
	for _, s := range []*Server{p.leader, p.helper} {
		if spent, _ := s.cfg.Ledger.Spent("d"); spent.Epsilon != 1 {
			t.Errorf("%s spent ε=%g after the retry, want 1", s.cfg.Role, spent.Epsilon)
		}
	}

	all := append(slices.Clone(recorded), late.ReportID())
	slices.SortFunc(all, payload.CompareIDs)
	// Drop a recorded report (not the late one: IDs are random, so all[0]
	// could be either).
	dropped := slices.DeleteFunc(slices.Clone(all), func(id payload.ReportID) bool { return id == recorded[0] })
	refused := map[string]*protocol.CreateRelease{
		"another ε":                 {Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 2}, Components: create.Components},
		"another component":         {Mechanism: spec, Components: []payload.Component{payload.Label, payload.NotLabel}},
		"a recorded report dropped": {Mechanism: spec, Components: create.Components, IDs: dropped, Reports: len(dropped), Digest: payload.Digest(dropped)},
	}
	for name, m := range refused {
		t.Run(name, func(t *testing.T) {
			m.Dataset, m.Release = "d", create.Release
			if _, err := p.askHelper(m); !errors.Is(err, ErrReleaseExists) {
				t.Errorf("retry: %v, want %q", err, ErrReleaseExists)
			}
		})
	}
	digestOnly := *create
	digestOnly.Reports, digestOnly.Digest = len(all), payload.Digest(all)
	if resp, err := p.askHelper(&digestOnly); err != nil || !resp.NeedIDs {
		t.Errorf("retry offering another report set by digest: %+v, %v; want a request for the IDs", resp, err)
	}
	if !bytes.Equal(p.helperRecord(t, create.Release), before) {
		t.Fatal("a refused retry changed the helper's record")
	}
}

// recordFails is a release store that saves pending records and fails
// every release record, like a leader that crashes after its charge and
// before its record.
type recordFails struct{ *memoryReleases }

func (r recordFails) SaveRelease(dataset string, id payload.ReleaseID, b []byte) error {
	if !isPending(b) {
		return errFull
	}
	return r.memoryReleases.SaveRelease(dataset, id, b)
}

// TestLeaderRetriesChargedRelease: the leader crashes after charging a
// release that spends its whole budget and before recording it, so the
// release stays pending, charged. The retry of that release with its
// spec is not refused by the leader's budget check, and completes at
// both servers without a second charge; a retry with a larger ε is
// refused (the leader's ledger knows the release by ID only, so the
// check used to admit any cost for it), and so is a new release. With
// δ > 0 the check used to refuse the retry (it read !charged && εover
// || δover).
func TestLeaderRetriesChargedRelease(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget ledger.Budget
		spec   mechanism.Params
	}{
		{"pure", ledger.Budget{Epsilon: 1}, mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1}},
		{"δ > 0", ledger.Budget{Epsilon: 1, Delta: 1e-6}, mechanism.Params{Name: "cascade", Bins: bins, Epsilon: 1, Delta: 1e-6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: c.budget, Policy: Policy{MaxDelta: c.spec.Delta, MaxEpsilon: 4}, MinReports: 3}, nil)
			parties := p.upload(t, 0.1, 0.5, 0.9)
			store := newMemoryReleases()
			p.leader.cfg.Releases = recordFails{store}
			create := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0x7a}, Mechanism: c.spec, Components: []payload.Component{payload.Count}}
			if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", create); !errors.Is(err, ErrReleasePending) || !strings.Contains(err.Error(), create.Release.String()) {
				t.Fatalf("a release the leader charged and could not record: %v, want it pending, named", err)
			}
			p.leader.cfg.Releases = store // the crash: the charge and the pending record kept
			p.restart(t, parties)
			larger := *create
			larger.Mechanism.Epsilon = 2 * c.spec.Epsilon
			if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", &larger); !errors.Is(err, ErrReleaseExists) {
				t.Fatalf("retry of the charged release at a larger ε: %v, want %v", err, ErrReleaseExists)
			}
			if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", create); err != nil {
				t.Fatalf("retry of the charged release: %v", err)
			}
			p.noisyPrefixes(t, create.Release)
			for _, s := range []*Server{p.leader, p.helper} {
				if spent, _ := s.cfg.Ledger.Spent("d"); spent != c.budget {
					t.Errorf("%s spent %+v, want %+v", s.cfg.Role, spent, c.budget)
				}
			}
			if _, _, err := p.release(1); !errors.Is(err, ledger.ErrBudgetExhausted) {
				t.Errorf("a new release after the budget is spent: %v", err)
			}
		})
	}
}
