package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// failingLedger refuses every charge, like a ledger on a full disk or a
// server that crashes at its charge.
type failingLedger struct{ ledger.Ledger }

func (failingLedger) Charge(string, payload.ReleaseID, ledger.Budget, ledger.Budget) error {
	return errFull
}

// TestLedgersNeverDiverge: whatever makes a release fail — the helper
// refusing it, either server unable to record it or the helper to charge
// it, the policy, the budget, a flood of reports — the leader's and the
// helper's ledgers end equal, after three attempts each under a new
// release ID as an analyst would retry. (The helper used to charge and
// then fail to record: a flood of 2²²+1 reports, more than a record
// holds, made each attempt charge the helper alone, exhausting its
// budget with the leader's untouched.)
func TestLedgersNeverDiverge(t *testing.T) {
	tree := spec("tree", 1, 0, mechanism.ReplaceOne)
	for _, c := range []struct {
		name      string
		setup     func(t *testing.T, p *pair)
		request   mechanism.Params
		maxReport int
		want      float64 // ε spent at both
		after     func(t *testing.T, p *pair)
	}{
		{name: "the helper lacks the reports", setup: func(t *testing.T, p *pair) { p.uploadTo(t, "leader", 0.3) }, request: tree},
		{name: "the helper cannot record", setup: func(t *testing.T, p *pair) {
			p.upload(t, 0.3)
			p.helper.cfg.Releases = &failingReleases{}
		}, request: tree},
		{name: "the helper cannot charge", setup: func(t *testing.T, p *pair) {
			p.upload(t, 0.3)
			p.helper.cfg.Ledger = failingLedger{ledger.NewMemory()}
		}, request: tree, after: func(t *testing.T, p *pair) {
			// Its records of the three attempts are never loaded: they
			// were never charged nor acknowledged.
			if _, stored := recorded(t, p.helper); stored != 3 {
				t.Fatalf("the helper stored %d records, want the 3 attempts'", stored)
			}
			p.restart(t, nil)
			if held, _ := recorded(t, p.helper); held != 0 {
				t.Fatalf("the restarted helper loaded %d uncharged releases", held)
			}
		}},
		{name: "the leader cannot record it as pending", setup: func(t *testing.T, p *pair) {
			p.upload(t, 0.3)
			p.leader.cfg.Releases = &failingReleases{}
		}, request: tree},
		{name: "the leader cannot record it once created", setup: func(t *testing.T, p *pair) {
			p.upload(t, 0.3)
			p.leader.cfg.Releases = recordFails{newMemoryReleases()}
		}, request: tree, want: 3},
		{name: "the policy refuses", setup: func(t *testing.T, p *pair) { p.upload(t, 0.3) }, request: spec("tree", 1, 0, mechanism.AddRemove)},
		{name: "the budget is exhausted", setup: func(t *testing.T, p *pair) { p.upload(t, 0.3) }, request: spec("tree", 4, 0, mechanism.ReplaceOne), want: 8},
		{name: "a flood of reports", maxReport: 2, setup: func(t *testing.T, p *pair) {
			p.upload(t, 0.1, 0.2)
			if err := newParty(t, 0.3).UploadKeys(context.Background(), p.servers); !errors.Is(err, ErrTooManyReports) {
				t.Fatalf("an upload beyond the dataset's maximum: %v", err)
			}
		}, request: tree, want: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 10}, MinReports: 1, MaxReports: c.maxReport}, nil)
			c.setup(t, p)
			for range 3 {
				id, _ := payload.NewID()
				m := &protocol.CreateRelease{Dataset: "d", Release: id, Mechanism: c.request, Components: []payload.Component{payload.Count}}
				_, _ = protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m)
			}
			leader, _ := p.leader.cfg.Ledger.Spent("d")
			helper, _ := p.helper.cfg.Ledger.Spent("d")
			if leader != helper || leader.Epsilon != c.want {
				t.Fatalf("the leader spent ε=%g, the helper ε=%g; want both %g", leader.Epsilon, helper.Epsilon, c.want)
			}
			if c.after != nil {
				c.after(t, p)
			}
		})
	}
}

// uploadTo has a party upload its DCF key to one server only.
func (p *pair) uploadTo(t *testing.T, to transport.PeerID, score float64) {
	t.Helper()
	q := newParty(t, score)
	leaderKey, helperKey, err := q.DCFKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	key := leaderKey
	if to == "helper" {
		key = helperKey
	}
	msg := &protocol.Upload{Dataset: "d", Report: q.ReportID(), Key: key}
	if _, err := protocol.Call[*protocol.Ack](context.Background(), p.servers.Conn, to, msg); err != nil {
		t.Fatal(err)
	}
}

// TestUploadsCappedAtMaxReports: a dataset accepts at most MaxReports
// reports (ErrTooManyReports beyond, at either server on its own), still
// acknowledges a duplicate of one it holds, and releases over them.
func TestUploadsCappedAtMaxReports(t *testing.T) {
	p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 1}, MinReports: 1, MaxReports: 2}, nil)
	parties := p.upload(t, 0.1, 0.5)
	extra := newParty(t, 0.9)
	leaderKey, helperKey, err := extra.DCFKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	for s, key := range map[*Server][]byte{p.leader: leaderKey, p.helper: helperKey} {
		if _, err := s.upload("party", &protocol.Upload{Dataset: "d", Report: extra.ReportID(), Key: key}); !errors.Is(err, ErrTooManyReports) {
			t.Errorf("%s: a third report to a dataset of at most 2: %v, want ErrTooManyReports", s.cfg.Role, err)
		}
	}
	if err := parties[0].UploadKeys(context.Background(), p.servers); err != nil {
		t.Errorf("a duplicate of a held report: %v", err)
	}
	if _, n, err := p.release(1); err != nil || n != 2 {
		t.Fatalf("release over the held reports: %d reports, %v; want 2", n, err)
	}
	for _, max := range []int{-1, protocol.MaxReports + 1} {
		t.Run(fmt.Sprintf("max %d", max), func(t *testing.T) {
			ds := Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 1}, MinReports: 1, MaxReports: max}
			if _, err := New(Config{Role: Helper, Peer: "leader", Ledger: ledger.NewMemory(), Datasets: []Dataset{ds}}); err == nil {
				t.Errorf("a dataset of at most %d reports was accepted", max)
			}
		})
	}
}

// TestLeaderAnswersRetriedRelease: an analyst whose reply was lost
// retries the same release at the leader. The leader answers from its
// record — the recorded report count, the same noise, no second charge
// (the first spent the whole budget) — even after more reports arrived;
// the same release ID with another spec is refused.
func TestLeaderAnswersRetriedRelease(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, DCF, 1, 1, nil)
	p.upload(t, 0.1, 0.5)
	create := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0x3c}, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
	first, err := protocol.Call[*protocol.ReleaseCreated](ctx, p.net.Conn("analyst"), "leader", create)
	if err != nil {
		t.Fatal(err)
	}
	before := p.noisyPrefixes(t, create.Release)
	p.upload(t, 0.9)
	again, err := protocol.Call[*protocol.ReleaseCreated](ctx, p.net.Conn("analyst"), "leader", create)
	if err != nil {
		t.Fatalf("retry of a created release: %v", err)
	}
	if again.Reports != first.Reports {
		t.Errorf("the retry answered %d reports, the release has %d", again.Reports, first.Reports)
	}
	if after := p.noisyPrefixes(t, create.Release); !slices.Equal(after, before) {
		t.Errorf("the release answers %v after the retry, %v before", after, before)
	}
	for _, s := range []*Server{p.leader, p.helper} {
		if spent, _ := s.cfg.Ledger.Spent("d"); spent.Epsilon != 1 {
			t.Errorf("%s spent ε=%g after the retry, want 1", s.cfg.Role, spent.Epsilon)
		}
	}
	for name, m := range map[string]*protocol.CreateRelease{
		"another ε":         {Mechanism: spec("tree", 0.5, 0, mechanism.ReplaceOne), Components: create.Components},
		"another mechanism": {Mechanism: spec("kary", 1, 0, mechanism.ReplaceOne), Components: create.Components},
		"another component": {Mechanism: create.Mechanism, Components: []payload.Component{payload.Label, payload.NotLabel}},
	} {
		t.Run(name, func(t *testing.T) {
			m.Dataset, m.Release = "d", create.Release
			if _, err := protocol.Call[*protocol.ReleaseCreated](ctx, p.net.Conn("analyst"), "leader", m); !errors.Is(err, ErrReleaseExists) {
				t.Errorf("the release ID again: %v, want %q", err, ErrReleaseExists)
			}
		})
	}
}
