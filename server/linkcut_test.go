package server

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
)

// cutNth fails, with fault, the n-th call (from 1) from → to carrying a
// message of kind k, and delivers every other call.
func cutNth(from, to transport.PeerID, k protocol.Kind, n int, fault transport.Fault) transport.Faults {
	seen := 0
	return func(f, t transport.PeerID, req []byte) transport.Fault {
		if f != from || t != to || len(req) < 2 || protocol.Kind(req[1]) != k {
			return transport.Deliver
		}
		if seen++; seen == n {
			return fault
		}
		return transport.Deliver
	}
}

// cutScenario is a fault at one step of release creation: arm sets it
// up on a fresh pair, and crash undoes the broken storage and restarts
// the crashed server from what it made durable.
type cutScenario struct {
	name    string
	arm     func(p *pair)
	crash   func(t *testing.T, p *pair, reupload func())
	refused bool // the leader refuses the release before recording it
}

// cutScenarios are the steps of release creation at which a link is cut
// or a server crashes. The leader and the helper hold different report
// sets, so the leader asks the helper twice: by digest, then (NeedIDs)
// with its full list.
func cutScenarios() []cutScenario {
	leaderToHelper := func(n int, f transport.Fault) func(p *pair) {
		return func(p *pair) { p.net.SetFaults(cutNth("leader", "helper", protocol.KindCreateRelease, n, f)) }
	}
	restartLeader := func(t *testing.T, p *pair, reupload func()) { p.restart(t, nil); reupload() }
	return []cutScenario{
		{name: "the manifest digests lost", arm: func(p *pair) {
			p.net.SetFaults(cutNth("leader", "helper", protocol.KindManifestDigest, 1, transport.LoseRequest))
		}, refused: true},
		{name: "the helper's manifest digests lost", arm: func(p *pair) {
			p.net.SetFaults(cutNth("leader", "helper", protocol.KindManifestDigest, 1, transport.LoseResponse))
		}, refused: true},
		{name: "the digest request lost", arm: leaderToHelper(1, transport.LoseRequest)},
		{name: "the helper's NeedIDs reply lost", arm: leaderToHelper(1, transport.LoseResponse)},
		{name: "the ID list lost", arm: leaderToHelper(2, transport.LoseRequest)},
		{name: "the helper's acknowledgement lost", arm: leaderToHelper(2, transport.LoseResponse)},
		{name: "the helper crashed after its record, before its charge", arm: func(p *pair) {
			leaderToHelper(2, transport.LoseResponse)(p)
			p.helper.cfg.Ledger = failingLedger{p.helper.cfg.Ledger}
		}, crash: func(t *testing.T, p *pair, reupload func()) {
			p.helper.cfg.Ledger = p.helper.cfg.Ledger.(failingLedger).Ledger
			restartLeader(t, p, reupload)
		}},
		{name: "the leader crashed after its pending record", arm: leaderToHelper(1, transport.LoseRequest), crash: restartLeader},
		{name: "the leader crashed after the helper's acknowledgement, before its charge", arm: func(p *pair) {
			p.leader.cfg.Ledger = failingLedger{p.leader.cfg.Ledger}
		}, crash: func(t *testing.T, p *pair, reupload func()) {
			p.leader.cfg.Ledger = p.leader.cfg.Ledger.(failingLedger).Ledger
			restartLeader(t, p, reupload)
		}},
		{name: "the leader crashed after its charge, before its record", arm: func(p *pair) {
			p.leader.cfg.Releases = recordFails{p.leader.cfg.Releases.(*memoryReleases)}
		}, crash: func(t *testing.T, p *pair, reupload func()) {
			p.leader.cfg.Releases = p.leader.cfg.Releases.(recordFails).memoryReleases
			restartLeader(t, p, reupload)
		}},
		{name: "the leader's reply to the analyst lost", arm: func(p *pair) {
			p.net.SetFaults(cutNth("analyst", "leader", protocol.KindCreateRelease, 1, transport.LoseResponse))
		}},
	}
}

// TestLinkCutAtEveryStep cuts the leader–helper link, or crashes a
// server, at every step of release creation, then retries the release
// by its ID in each way an analyst or operator can: asking for it
// again, reading it (fedecdf query --release), or the leader resolving
// its pending releases (as at start-up). Every failed attempt's error
// names the release ID; a release refused before the leader recorded it
// is charged nowhere; until the retry, the leader holds the release's
// cost, so a second release that would fit only without it is refused;
// after the retry both ledgers hold exactly one charge, both servers
// answer the release over the same report set, and nothing is pending.
func TestLinkCutAtEveryStep(t *testing.T) {
	retries := map[string]func(p *pair, m *protocol.CreateRelease) error{
		"asked again": func(p *pair, m *protocol.CreateRelease) error {
			_, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m)
			return err
		},
		"read": func(p *pair, m *protocol.CreateRelease) error {
			q := &protocol.Query{Dataset: "d", Release: m.Release, Component: payload.Count, Prefixes: []int{1}}
			_, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "leader", q)
			return err
		},
		"resolved by the leader": func(p *pair, _ *protocol.CreateRelease) error {
			return p.leader.ResolvePending(context.Background())
		},
	}
	for _, sc := range cutScenarios() {
		for how, retry := range retries {
			t.Run(sc.name+"/"+how, func(t *testing.T) {
				p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 1.5}, MinReports: 3}, nil)
				parties := p.upload(t, 0.1, 0.5, 0.9)
				reupload := p.leaderOnly(t, 0.7)
				m := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0xc7}, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
				sc.arm(p)
				_, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m)
				switch {
				case err == nil:
					t.Fatal("the release succeeded despite the fault")
				case !errors.Is(err, transport.ErrLinkCut) && !strings.Contains(err.Error(), m.Release.String()):
					t.Fatalf("the analyst's error does not name release %v: %v", m.Release, err)
				}
				if sc.crash != nil {
					sc.crash(t, p, func() { reupload(); p.reupload(t, parties) })
				}
				p.net.SetFaults(nil)
				if sc.refused {
					p.checkAgree(t, m.Release, 0)
					return
				}
				if _, _, err := p.release(1); !errors.Is(err, ledger.ErrBudgetExhausted) {
					t.Fatalf("a second release of ε=1 while the first holds ε=1 of 1.5: %v, want refused", err)
				} else if charged, _ := p.leader.cfg.Ledger.Charged("d", m.Release); p.leader.datasets["d"].pending[m.Release] != nil && !charged && !strings.Contains(err.Error(), "held by 1 pending releases") {
					t.Errorf("the refusal does not say a pending release holds the budget: %v", err)
				}
				if err := retry(p, m); err != nil {
					t.Fatalf("retry: %v", err)
				}
				p.checkAgree(t, m.Release, 1)
			})
		}
	}
}

// leaderOnly uploads one party's key to the leader only and returns how
// to upload it again (after a restart).
func (p *pair) leaderOnly(t *testing.T, score float64) func() {
	t.Helper()
	q := newParty(t, score)
	key, _, err := q.DCFKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func() {
		msg := &protocol.Upload{Dataset: "d", Report: q.ReportID(), Key: key}
		if _, err := protocol.Call[*protocol.Ack](context.Background(), p.servers.Conn, "leader", msg); err != nil {
			t.Fatal(err)
		}
	}
	send()
	return send
}

// reupload sends the parties' reports to both servers again.
func (p *pair) reupload(t *testing.T, parties []*party.Party) {
	t.Helper()
	for _, q := range parties {
		if err := q.UploadKeys(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
	}
}

// checkAgree checks that both servers spent ε and, if ε > 0, hold
// release id over the same report set, which the leader answers;
// nothing is pending at the leader.
func (p *pair) checkAgree(t *testing.T, id payload.ReleaseID, eps float64) {
	t.Helper()
	leader, _ := p.leader.cfg.Ledger.Spent("d")
	helper, _ := p.helper.cfg.Ledger.Spent("d")
	if leader != helper || leader.Epsilon != eps {
		t.Fatalf("the leader spent ε=%g, the helper ε=%g; want both %g", leader.Epsilon, helper.Epsilon, eps)
	}
	if n := len(p.leader.datasets["d"].pending); n != 0 {
		t.Fatalf("%d releases still pending at the leader", n)
	}
	l, h := p.leader.datasets["d"].releases[id], p.helper.datasets["d"].releases[id]
	if eps == 0 {
		if l != nil || h != nil {
			t.Fatalf("release %v held by the leader (%v) or the helper (%v) with nothing charged", id, l != nil, h != nil)
		}
		return
	}
	if l == nil || h == nil || !slices.Equal(l.reports, h.reports) {
		t.Fatalf("release %v: the leader holds it %v, the helper %v, not over the same reports", id, l != nil, h != nil)
	}
	p.noisyPrefixes(t, id)
}

// TestRetryAbortsRefusedRelease: a release left pending by a lost
// request is retried after the helper has come to refuse it (too few
// reports held by both: the leader's fourth report never reached the
// helper). The leader aborts it — nothing charged at either, no pending
// record kept, the release unknown — and the error says so with the ID;
// the same ID is then created afresh once the helper holds the report.
func TestRetryAbortsRefusedRelease(t *testing.T) {
	p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 1}, MinReports: 4}, nil)
	p.upload(t, 0.1, 0.5, 0.9)
	late := newParty(t, 0.7)
	leaderKey, helperKey, _ := late.DCFKeys(nil)
	if _, err := protocol.Call[*protocol.Ack](context.Background(), p.servers.Conn, "leader", &protocol.Upload{Dataset: "d", Report: late.ReportID(), Key: leaderKey}); err != nil {
		t.Fatal(err)
	}
	m := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0xab}, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
	p.net.SetFaults(cutNth("leader", "helper", protocol.KindCreateRelease, 1, transport.LoseRequest))
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); !errors.Is(err, ErrReleasePending) {
		t.Fatalf("first attempt: %v, want %v", err, ErrReleasePending)
	}
	p.net.SetFaults(nil)
	_, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m)
	if !errors.Is(err, ErrReleaseAborted) || !errors.Is(err, ErrTooFewReports) || !strings.Contains(err.Error(), m.Release.String()) {
		t.Fatalf("retry after the helper came to refuse: %v, want %v naming the release and the helper's reason", err, ErrReleaseAborted)
	}
	p.checkAgree(t, m.Release, 0)
	if n := stored(t, p.leader); n != 0 {
		t.Fatalf("the leader keeps %d records of an aborted release", n)
	}
	if _, err := protocol.Call[*protocol.Ack](context.Background(), p.servers.Conn, "helper", &protocol.Upload{Dataset: "d", Report: late.ReportID(), Key: helperKey}); err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); err != nil {
		t.Fatalf("the aborted release ID created afresh: %v", err)
	}
	p.checkAgree(t, m.Release, 1)
}

// stored counts the records in s's release store.
func stored(t *testing.T, s *Server) int {
	t.Helper()
	n := 0
	if err := s.cfg.Releases.LoadReleases("d", func(payload.ReleaseID, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRefusalWithoutLookingKeepsPending: the helper created a release
// and its acknowledgement was lost; then the helper is restarted on
// another manifest and refuses the retry before looking at its records.
// The leader must not abort (the helper holds a charge of the release):
// the release stays pending, and completes at both once the helper runs
// the leader's manifest again.
func TestRefusalWithoutLookingKeepsPending(t *testing.T) {
	p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 2}, MinReports: 1}, nil)
	parties := p.upload(t, 0.1, 0.5)
	m := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0x5a}, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
	p.net.SetFaults(cutNth("leader", "helper", protocol.KindCreateRelease, 1, transport.LoseResponse))
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); !errors.Is(err, ErrReleasePending) {
		t.Fatalf("first attempt: %v, want %v", err, ErrReleasePending)
	}
	other := maps.Clone(testManifest)
	other["budget"] = [32]byte{0xff}
	p.helper.cfg.Manifest = other
	p.restart(t, nil)
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); !errors.Is(err, ErrManifestMismatch) || errors.Is(err, ErrReleaseAborted) {
		t.Fatalf("retry against a helper on another manifest: %v, want %v, not aborted", err, ErrManifestMismatch)
	}
	if n := len(p.leader.datasets["d"].pending); n != 1 {
		t.Fatalf("%d releases pending at the leader, want the one", n)
	}
	// Against a helper that refuses before looking whatever the manifest
	// (it no longer holds the dataset), the same.
	err := p.leader.abortOrKeep(p.leader.datasets["d"], m, &protocol.RemoteError{Peer: "helper", Text: "helper: unknown dataset \"d\""})
	if !errors.Is(err, ErrReleasePending) || len(p.leader.datasets["d"].pending) != 1 {
		t.Fatalf("a refusal without ErrNotCharged: %v, want the release kept pending", err)
	}
	p.helper.cfg.Manifest = testManifest
	p.restart(t, parties)
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); err != nil {
		t.Fatalf("retry once the helper runs the leader's manifest: %v", err)
	}
	p.checkAgree(t, m.Release, 1)
}

// TestRetryMustRepeatTheSpec: a retry of a pending release with a larger
// ε, another mechanism or other components is refused before anything
// reaches the helper (the ledger knows a release by ID only, so a
// larger ε must not pass as already charged); the exact retry completes
// it at its recorded cost.
func TestRetryMustRepeatTheSpec(t *testing.T) {
	p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 4}, MinReports: 1}, nil)
	p.upload(t, 0.1, 0.5)
	m := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0x3e}, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
	p.net.SetFaults(cutNth("leader", "helper", protocol.KindCreateRelease, 1, transport.LoseRequest))
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); !errors.Is(err, ErrReleasePending) {
		t.Fatalf("first attempt: %v, want %v", err, ErrReleasePending)
	}
	p.net.SetFaults(func(from, to transport.PeerID, req []byte) transport.Fault {
		if to == "helper" && protocol.Kind(req[1]) == protocol.KindCreateRelease {
			t.Errorf("a retry with another spec reached the helper")
		}
		return transport.Deliver
	})
	for name, other := range map[string]*protocol.CreateRelease{
		"a larger ε":        {Mechanism: spec("tree", 3, 0, mechanism.ReplaceOne), Components: m.Components},
		"another mechanism": {Mechanism: spec("kary", 1, 0, mechanism.ReplaceOne), Components: m.Components},
		"other components":  {Mechanism: m.Mechanism, Components: []payload.Component{payload.Label, payload.NotLabel}},
	} {
		t.Run(name, func(t *testing.T) {
			other.Dataset, other.Release = "d", m.Release
			_, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", other)
			if !errors.Is(err, ErrReleaseExists) || !strings.Contains(err.Error(), "tree ε=1") {
				t.Errorf("retry with %s: %v, want %v naming the pending spec", name, err, ErrReleaseExists)
			}
		})
	}
	p.net.SetFaults(nil)
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); err != nil {
		t.Fatalf("the exact retry: %v", err)
	}
	p.checkAgree(t, m.Release, 1)
}
