package server

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
)

const bins = 16

type pair struct {
	net            *transport.Network
	leader, helper *Server
	servers        party.Servers
}

func newPair(t *testing.T, backend Backend, budget float64, minReports int, leaderLedger ledger.Ledger) *pair {
	t.Helper()
	return newPairOf(t, Dataset{Name: "d", Backend: backend, Unverified: backend == DCF, Bins: bins, Budget: ledger.Budget{Epsilon: budget}, MinReports: minReports}, leaderLedger)
}

// testManifest stands for the digests of the manifest both servers of
// a pair run.
var testManifest = map[string][32]byte{"grid": {1}, "budget": {2}}

// testVerifyKey is the verification key both servers of a pair share.
var testVerifyKey = [32]byte{31: 7}

// newPairOf returns a leader and a helper serving dataset d (named "d")
// under the same manifest.
func newPairOf(t testing.TB, d Dataset, leaderLedger ledger.Ledger) *pair {
	t.Helper()
	return newPairOn(t, d, leaderLedger, ledger.NewMemory())
}

// newPairOn is newPairOf with the helper's ledger too.
func newPairOn(t testing.TB, d Dataset, leaderLedger, helperLedger ledger.Ledger) *pair {
	t.Helper()
	if leaderLedger == nil {
		leaderLedger = ledger.NewMemory()
	}
	ds := []Dataset{d}
	net := transport.NewNetwork()
	leader, err := New(Config{Role: Leader, Peer: "helper", Conn: net.Conn("leader"), Ledger: leaderLedger, Datasets: ds, Manifest: testManifest, VerifyKey: testVerifyKey})
	if err != nil {
		t.Fatal(err)
	}
	helper, err := New(Config{Role: Helper, Peer: "leader", Ledger: helperLedger, Datasets: ds, Manifest: testManifest, VerifyKey: testVerifyKey})
	if err != nil {
		t.Fatal(err)
	}
	net.Register("leader", leader.Handle)
	net.Register("helper", helper.Handle)
	if err := leader.CheckPeer(context.Background()); err != nil { // first contact, as at start-up
		t.Fatal(err)
	}
	return &pair{net: net, leader: leader, helper: helper, servers: party.Servers{Conn: net.Conn("party"), Leader: "leader", Helper: "helper", Dataset: "d"}}
}

func newParty(t *testing.T, score float64) *party.Party {
	t.Helper()
	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	p, err := party.New(party.Instance{Score: score, Label: 1}, g)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// release creates a release of the Count component at ε and returns its
// report count.
func (p *pair) release(eps float64) (payload.ReleaseID, int, error) {
	return p.releaseOf(eps, payload.Count)
}

// releaseOf creates a release of comps at spec ε.
func (p *pair) releaseOf(eps float64, comps ...payload.Component) (payload.ReleaseID, int, error) {
	id, _ := payload.NewID()
	msg := &protocol.CreateRelease{Dataset: "d", Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: eps}, Components: comps}
	resp, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", msg)
	if err != nil {
		return id, 0, err
	}
	return id, resp.Reports, nil
}

// total queries prefix N of a release at ε = 2^48 (no noise): the count.
func (p *pair) total(t *testing.T, rel payload.ReleaseID) int {
	t.Helper()
	msg := &protocol.Query{Dataset: "d", Release: rel, Component: payload.Count, Prefixes: []int{bins}}
	ans, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "leader", msg)
	if err != nil {
		t.Fatal(err)
	}
	return int(ans.Values[0])
}

func TestBudgetExhausted(t *testing.T) {
	p := newPair(t, DCF, 1, 1, nil)
	if err := newParty(t, 0.3).UploadKeys(context.Background(), p.servers); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.release(0.6); err != nil {
		t.Fatal(err)
	}
	_, _, err := p.release(0.6)
	if !errors.Is(err, ledger.ErrBudgetExhausted) || !strings.Contains(err.Error(), `refused: dataset "d": ledger: budget exhausted: spent ε=0.6, δ=0 of the total ε=1, δ=0; this release needs ε=0.6, δ=0`) {
		t.Fatalf("second release: %v", err)
	}
	if _, _, err := p.release(0.4); err != nil {
		t.Fatalf("release using the rest of the budget: %v", err)
	}
	for _, s := range []*Server{p.leader, p.helper} {
		if spent, _ := s.cfg.Ledger.Spent("d"); spent.Epsilon != 1 {
			t.Errorf("%s spent ε=%g, want 1", s.cfg.Role, spent.Epsilon)
		}
	}
}

// TestReleaseChargedPerPrivacyUnit: both servers charge the ROC pair
// {Label, NotLabel} once and {Label, NotLabel, Probability} twice
// (payload.PrivacyUnits), and refuse what exceeds the rest.
func TestReleaseChargedPerPrivacyUnit(t *testing.T) {
	p := newPair(t, DCF, 1, 1, nil)
	if err := newParty(t, 0.3).UploadKeys(context.Background(), p.servers); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.releaseOf(0.5, payload.Label, payload.NotLabel); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.releaseOf(0.3, payload.Label, payload.NotLabel, payload.Probability); !errors.Is(err, ledger.ErrBudgetExhausted) || !strings.Contains(err.Error(), "this release needs ε=0.6") {
		t.Fatalf("two units at 0.3 after spending 0.5 of 1: %v, want refused (needs ε=0.6)", err)
	}
	if _, _, err := p.releaseOf(0.25, payload.Label, payload.NotLabel, payload.Probability); err != nil {
		t.Fatalf("two units at 0.25 after spending 0.5 of 1: %v", err)
	}
	for _, s := range []*Server{p.leader, p.helper} {
		if spent, _ := s.cfg.Ledger.Spent("d"); spent.Epsilon != 1 {
			t.Errorf("%s spent ε=%g, want 0.5 + 2·0.25 = 1", s.cfg.Role, spent.Epsilon)
		}
	}
}

// TestHelperRefusesBeyondItsBudget: the helper enforces its own ledger
// even when the leader's has room.
func TestHelperRefusesBeyondItsBudget(t *testing.T) {
	p := newPair(t, DCF, 1, 1, nil)
	if err := newParty(t, 0.3).UploadKeys(context.Background(), p.servers); err != nil {
		t.Fatal(err)
	}
	id, _ := payload.NewID()
	// Both ledgers hold the release (as they must: the ledger check
	// compares their counts), at a larger cost on the helper's.
	if err := p.helper.cfg.Ledger.Charge("d", id, ledger.Budget{Epsilon: 0.9}, ledger.Budget{Epsilon: 1}); err != nil {
		t.Fatal(err)
	}
	if err := p.leader.cfg.Ledger.Charge("d", id, ledger.Budget{Epsilon: 0.1}, ledger.Budget{Epsilon: 1}); err != nil {
		t.Fatal(err)
	}
	_, _, err := p.release(0.5)
	if !errors.Is(err, ledger.ErrBudgetExhausted) || !strings.Contains(err.Error(), "helper: ") {
		t.Fatalf("release beyond the helper's budget: %v", err)
	}
	if spent, _ := p.leader.cfg.Ledger.Spent("d"); spent.Epsilon != 0.1 {
		t.Errorf("the leader charged ε=%g for a refused release", spent.Epsilon-0.1)
	}
}

func TestFileLedgerSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	l, err := ledger.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	total := ledger.Budget{Epsilon: 1}
	rel, _ := payload.NewID()
	if err := l.Charge("d", rel, ledger.Budget{Epsilon: 0.7}, total); err != nil {
		t.Fatal(err)
	}
	if err := l.Charge("d", rel, ledger.Budget{Epsilon: 0.7}, total); err != nil {
		t.Fatalf("charging the same release again: %v", err)
	}
	reloaded, err := ledger.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if spent, _ := reloaded.Spent("d"); spent.Epsilon != 0.7 {
		t.Fatalf("reloaded ledger spent ε=%g, want 0.7", spent.Epsilon)
	}
	other, _ := payload.NewID()
	if err := reloaded.Charge("d", other, ledger.Budget{Epsilon: 0.5}, total); !errors.Is(err, ledger.ErrBudgetExhausted) {
		t.Fatalf("charge beyond the reloaded budget: %v", err)
	}
	// A server restarted on the reloaded ledger refuses the release too
	// (its helper's ledger holding the same release).
	helperLedger := ledger.NewMemory()
	if err := helperLedger.Charge("d", rel, ledger.Budget{Epsilon: 0.7}, total); err != nil {
		t.Fatal(err)
	}
	p := newPairOn(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: total, MinReports: 1}, reloaded, helperLedger)
	if err := newParty(t, 0.3).UploadKeys(context.Background(), p.servers); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.release(0.5); !errors.Is(err, ledger.ErrBudgetExhausted) {
		t.Fatalf("release after restart: %v", err)
	}
}

func TestDuplicateReportsCountedOnce(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, DCF, 1<<50, 1, nil)
	a, b := newParty(t, 0.1), newParty(t, 0.9)
	for _, q := range []*party.Party{a, b, a} {
		if err := q.UploadKeys(ctx, p.servers); err != nil {
			t.Fatal(err)
		}
	}
	rel, n, err := p.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || p.total(t, rel) != 2 {
		t.Fatalf("release over %d reports with total %d, want 2 and 2", n, p.total(t, rel))
	}
}

// TestReportMissingAtOneServer: a report only the leader holds, and one
// only the helper holds, are both excluded at both servers.
func TestReportMissingAtOneServer(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, DCF, 1<<50, 1, nil)
	both, leaderOnly, helperOnly := newParty(t, 0.1), newParty(t, 0.5), newParty(t, 0.7)
	if err := both.UploadKeys(ctx, p.servers); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q  *party.Party
		to transport.PeerID
		k  int
	}{{leaderOnly, "leader", 0}, {helperOnly, "helper", 1}} {
		keys := make([][]byte, 2)
		keys[0], keys[1], _ = c.q.DCFKeys(nil)
		msg := &protocol.Upload{Dataset: "d", Report: c.q.ReportID(), Key: keys[c.k]}
		if _, err := protocol.Call[*protocol.Ack](ctx, p.servers.Conn, c.to, msg); err != nil {
			t.Fatal(err)
		}
	}
	rel, n, err := p.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	// Had either server summed a report the other lacks, the total would
	// be a random 64-bit share, not 1.
	if n != 1 || p.total(t, rel) != 1 {
		t.Fatalf("release over %d reports with total %d, want 1 and 1", n, p.total(t, rel))
	}
}

func TestMinimumReports(t *testing.T) {
	p := newPair(t, DCF, 10, 3, nil)
	for range 2 {
		if err := newParty(t, 0.5).UploadKeys(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := p.release(1); !errors.Is(err, ErrTooFewReports) || !strings.Contains(err.Error(), "minimum 3") {
		t.Fatalf("release with 2 of 3 reports: %v", err)
	}
}

func TestMalformedKeyNamesReport(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, DCF, 1, 1, nil)
	q := newParty(t, 0.5)
	k0, k1, err := q.DCFKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string][]byte{
		"truncated":   k0[:len(k0)-3],
		"wrong party": k1,
		"empty":       nil,
	} {
		t.Run(name, func(t *testing.T) {
			msg := &protocol.Upload{Dataset: "d", Report: q.ReportID(), Key: key}
			_, err := protocol.Call[*protocol.Ack](ctx, p.servers.Conn, "leader", msg)
			if err == nil || !strings.Contains(err.Error(), q.ReportID().String()) {
				t.Errorf("error %v does not name report %v", err, q.ReportID())
			}
		})
	}
	if resp := p.leader.Handle(ctx, "x", []byte{0xff, 9}); !strings.Contains(string(resp), "protocol version 255") {
		t.Errorf("garbage request answered %q", resp)
	}
}

func TestHelperAnswersOnlyTheLeader(t *testing.T) {
	p := newPair(t, DCF, 1, 1, nil)
	id, _ := payload.NewID()
	msg := &protocol.CreateRelease{Dataset: "d", Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1}, Components: []payload.Component{payload.Count}}
	_, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("mallory"), "helper", msg)
	if !errors.Is(err, ErrNotLeader) {
		t.Fatalf("release request from a stranger: %v", err)
	}
}

// TestHandleMessageAnswersAsHandle: the decoded entry point gives the
// encoded one's reply, for an accepted request and for refusals.
func TestHandleMessageAnswersAsHandle(t *testing.T) {
	p := newPair(t, DCF, 4, 1, nil)
	for _, tc := range []struct {
		name string
		msg  protocol.Message
	}{
		{"digest exchange", &protocol.ManifestDigest{Fields: manifestFields(testManifest)}},
		{"not a request", &protocol.Ack{}},
		{"unknown dataset", &protocol.StatusRequest{Dataset: "nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := p.helper.Handle(context.Background(), "leader", protocol.Encode(tc.msg))
			if got := protocol.Encode(p.helper.handleMessage(context.Background(), "leader", tc.msg)); !bytes.Equal(got, want) {
				t.Errorf("handleMessage replies %x, Handle %x", got, want)
			}
		})
	}
	if r := p.helper.Handle(context.Background(), "leader", []byte{0xff}); !strings.Contains(describeReply(t, r), "malformed request") {
		t.Errorf("a malformed request: %s", describeReply(t, r))
	}
}

// describeReply returns a reply's error text, or "ok".
func describeReply(t *testing.T, resp []byte) string {
	t.Helper()
	msg, err := protocol.Decode(resp)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := msg.(*protocol.Error); ok {
		return e.Text
	}
	return "ok"
}
