package server

import (
	"context"
	crand "crypto/rand"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/party"
)

// verifiedBackends are the backends whose servers verify every report.
var verifiedBackends = []Backend{Additive, DCF}

// uploadVerified has one honest party per score upload its verified
// report (of the pair's backend; its keys if unverified), and returns
// their report IDs.
func (p *pair) uploadVerified(t *testing.T, scores ...float64) []payload.ReportID {
	t.Helper()
	var ids []payload.ReportID
	for _, x := range scores {
		q := newParty(t, x)
		upload := q.UploadVerified
		switch d := p.leader.datasets["d"]; {
		case d.Unverified:
			upload = q.UploadKeys
		case d.Backend == DCF:
			upload = q.UploadVerifiedKeys
		}
		if err := upload(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.ReportID())
	}
	return ids
}

// forgery is one kind of invalid report of a verified backend.
type forgery struct {
	name string
	want error
	kind int // verify.Forgery or vdcf.Forgery
}

// forgeries lists the forgeries of a verified backend.
func forgeries(b Backend) []forgery {
	var out []forgery
	if b == Additive {
		for _, k := range verify.Forgeries() {
			out = append(out, forgery{k.Name, k.Want, int(k.Kind)})
		}
		return out
	}
	s, _ := vdcf.New(bins)
	for _, k := range s.Forgeries() {
		out = append(out, forgery{k.Name, k.Want, int(k.Kind)})
	}
	return out
}

// forge uploads an invalid report of kind k (of the pair's backend) from
// its own peer.
func (p *pair) forge(t *testing.T, k int, rng *rand.Rand) {
	t.Helper()
	id, _ := payload.NewID()
	servers := p.servers
	servers.Conn = p.net.Conn(transport.PeerID("mallory-" + id.String()))
	bin, label := rng.IntN(bins), rng.IntN(2) == 1
	var err error
	if p.leader.datasets["d"].Backend == Additive {
		s, _ := verify.New(bins)
		var r verify.Report
		if r, err = s.Forge(verify.Forgery(k), id, bin, label, crand.Reader, rng); err != nil {
			t.Fatal(err)
		}
		err = party.Upload(context.Background(), servers, party.Report{ID: r.Nonce, Public: r.Public, Shares: r.Shares})
	} else {
		s, _ := vdcf.New(bins)
		var r vdcf.Report
		if r, err = s.Forge(vdcf.Forgery(k), id, bin, label, crand.Reader, rng); err != nil {
			t.Fatal(err)
		}
		err = party.Upload(context.Background(), servers, party.Report{ID: r.Nonce, Shares: r.Shares})
	}
	if err != nil && !errors.Is(err, verify.ErrMalformed) && !errors.Is(err, verify.ErrMismatch) {
		t.Fatal(err)
	}
}

// checkVerified checks that both servers counted the same reports (n of
// counted returns, sorted, the reports of dataset srv counts (accepted).
func counted(srv *Server, dataset string) []payload.ReportID {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return slices.SortedFunc(maps.Keys(srv.datasets[dataset].reports), payload.CompareIDs)
}

// them) and rejected the same, want.
func (p *pair) checkVerified(t *testing.T, n int, want map[string]int) {
	t.Helper()
	var ids [2][]payload.ReportID
	for i, srv := range []*Server{p.leader, p.helper} {
		got, err := srv.Rejected("d")
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s rejected %v, want %v", srv.cfg.Role, got, want)
		}
		ids[i] = counted(srv, "d")
	}
	if len(ids[0]) != n || !slices.Equal(ids[0], ids[1]) {
		t.Errorf("the leader counted %d reports, the helper %d (equal: %v), want %d at both", len(ids[0]), len(ids[1]), slices.Equal(ids[0], ids[1]), n)
	}
}

// TestEveryForgeryRejectedAtBothServers: each kind of invalid report is
// rejected at both servers, for one reason, and a release at ε = 2^48
// counts exactly the honest reports.
func TestEveryForgeryRejectedAtBothServers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range verifiedBackends {
		for _, k := range forgeries(b) {
			t.Run(string(b)+"/"+k.name, func(t *testing.T) {
				p := newVerifiedPair(t, b)
				p.uploadVerified(t, 0.1, 0.5, 0.5)
				p.forge(t, k.kind, rng)
				p.forge(t, k.kind, rng)
				if err := p.leader.Verify(context.Background()); err != nil {
					t.Fatal(err)
				}
				p.checkVerified(t, 3, map[string]int{verify.Reason(k.want): 2})
				rel, n, err := p.release(1 << 48)
				if err != nil {
					t.Fatal(err)
				}
				if got := p.total(t, rel); n != 3 || got != 3 {
					t.Errorf("release over %d reports, total %d, want 3 and 3", n, got)
				}
			})
		}
	}
}

// tamper makes the helper's handler pass the leader's verification
// messages (Prepare) and its own answers (Prepared) through edit: a
// corrupt server, or a corrupt link, altering them.
func (p *pair) tamper(edit func(m protocol.Message)) {
	p.net.Register("helper", func(ctx context.Context, from transport.PeerID, req []byte) []byte {
		if m, err := protocol.Decode(req); err == nil {
			if _, ok := m.(*protocol.Prepare); ok {
				edit(m)
				req = protocol.Encode(m)
			}
		}
		resp := p.helper.Handle(ctx, from, req)
		if m, err := protocol.Decode(resp); err == nil {
			if _, ok := m.(*protocol.Prepared); ok {
				edit(m)
				resp = protocol.Encode(m)
			}
		}
		return resp
	})
}

// itemsOf returns the items of a verification message.
func itemsOf(m protocol.Message) []protocol.Item {
	switch m := m.(type) {
	case *protocol.Prepare:
		return m.Items
	case *protocol.Prepared:
		return m.Items
	}
	return nil
}

// TestBadVerifierMessageRejectedAtBoth plays a corrupt server in the
// verification exchange: a leader or a helper whose verifier message for
// an honest report is altered, replaced by another report's, or claimed
// with a rejection. Whichever server receives it rejects the report, and
// the other server then rejects it too: it counts at neither, and both
// servers count the same reports.
func TestBadVerifierMessageRejectedAtBoth(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) { badVerifierMessage(t, b) })
	}
}

func badVerifierMessage(t *testing.T, b Backend) {
	for _, c := range []struct {
		name   string
		kind   func(protocol.Message) bool
		edit   func(items []protocol.Item)
		reason string
	}{
		{"leader flips a byte", isPrepare, flipByte, "proof"},
		{"helper flips a byte", isPrepared, flipByte, "proof"},
		{"leader swaps two reports' messages", isPrepare, swapMessages, "proof"},
		{"helper swaps two reports' messages", isPrepared, swapMessages, "proof"},
		{"leader truncates a message", isPrepare, truncate, "malformed"},
		{"helper truncates a message", isPrepared, truncate, "malformed"},
		{"helper claims a rejection", isPrepared, claimRejection, "mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newVerifiedPair(t, b)
			p.uploadVerified(t, 0.1, 0.5, 0.9)
			p.tamper(func(m protocol.Message) {
				if c.kind(m) {
					c.edit(itemsOf(m))
				}
			})
			if err := p.leader.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			rejected, err := p.leader.Rejected("d")
			if err != nil {
				t.Fatal(err)
			}
			if rejected[c.reason] == 0 {
				t.Fatalf("leader rejected %v, want some %s", rejected, c.reason)
			}
			n := 3
			for _, v := range rejected {
				n -= v
			}
			p.checkVerified(t, n, rejected)
		})
	}
}

// TestCorruptLeaderSecondMessage plays a corrupt leader of a verified
// DCF dataset that alters its second verifier message, sent in Decide,
// for an honest report: the helper, which decides from it, rejects the
// report (the check value is not zero). The leader accepted it: a corrupt
// server's own count is its to falsify, as its answers are; the honest
// server's count is right.
func TestCorruptLeaderSecondMessage(t *testing.T) {
	p := newVerifiedPair(t, DCF)
	p.uploadVerified(t, 0.1, 0.5, 0.9)
	p.net.Register("helper", func(ctx context.Context, from transport.PeerID, req []byte) []byte {
		if m, err := protocol.Decode(req); err == nil {
			if d, ok := m.(*protocol.Decide); ok && len(d.Items) > 0 && len(d.Items[0].Message) > 0 {
				d.Items[0].Message[3] ^= 1
				req = protocol.Encode(d)
			}
		}
		return p.helper.Handle(ctx, from, req)
	})
	if err := p.leader.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := p.helper.Rejected("d")
	if err != nil {
		t.Fatal(err)
	}
	if ids := counted(p.helper, "d"); !maps.Equal(got, map[string]int{"proof": 1}) || len(ids) != 2 {
		t.Errorf("the helper rejected %v and counted %d reports, want one proof rejection and 2", got, len(ids))
	}
}

func isPrepare(m protocol.Message) bool  { _, ok := m.(*protocol.Prepare); return ok }
func isPrepared(m protocol.Message) bool { _, ok := m.(*protocol.Prepared); return ok }

func flipByte(items []protocol.Item) { items[0].Message[3] ^= 1 }

func swapMessages(items []protocol.Item) {
	items[0].Message, items[1].Message = items[1].Message, items[0].Message
}

func truncate(items []protocol.Item) { items[0].Message = items[0].Message[:5] }

func claimRejection(items []protocol.Item) {
	items[0].Verdict, items[0].Message = protocol.VerdictMismatch, nil
}

// TestLostVerificationReplies: a cut link loses the helper's answers and
// then the leader's decisions; retries decide every report once, the
// same at both servers.
func TestLostVerificationReplies(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) { lostVerificationReplies(t, b) })
	}
}

func lostVerificationReplies(t *testing.T, b Backend) {
	forged := forgeries(b)[1] // count 2 (additive), count p−1 (dcf)
	for name, lose := range map[string]protocol.Kind{"prepared": protocol.KindPrepare, "decide": protocol.KindDecide} {
		t.Run(name, func(t *testing.T) {
			p := newVerifiedPair(t, b)
			p.uploadVerified(t, 0.1, 0.5, 0.9)
			p.forge(t, forged.kind, rand.New(rand.NewPCG(1, 1)))
			p.net.SetFaults(func(from, to transport.PeerID, req []byte) transport.Fault {
				if len(req) > 1 && protocol.Kind(req[1]) == lose {
					return transport.LoseResponse
				}
				return transport.Deliver
			})
			if err := p.leader.Verify(context.Background()); !errors.Is(err, transport.ErrLinkCut) {
				t.Fatalf("verification over a cut link: %v", err)
			}
			p.net.SetFaults(nil)
			for range 2 {
				if err := p.leader.Verify(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			p.checkVerified(t, 3, map[string]int{verify.Reason(forged.want): 1})
			rel, n, err := p.release(1 << 48)
			if err != nil || n != 3 || p.total(t, rel) != 3 {
				t.Fatalf("release after the retries: %d reports, %v", n, err)
			}
		})
	}
}

// TestVerificationOnlyFromTheLeader plays an analyst or party sending
// verification messages: the helper takes them from the leader only, and
// the leader from nobody, so nobody else can decide a report at either
// server (a report decided at one server only would count at one).
func TestVerificationOnlyFromTheLeader(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) {
			p := newVerifiedPair(t, b)
			id := p.uploadVerified(t, 0.5)
			for _, to := range []transport.PeerID{"helper", "leader"} {
				for _, m := range []protocol.Message{
					&protocol.Prepare{Dataset: "d", Items: []protocol.Item{{Report: id[0], Verdict: protocol.VerdictProof}}},
					&protocol.Decide{Dataset: "d", Items: []protocol.Item{{Report: id[0], Verdict: protocol.VerdictProof}}},
				} {
					if _, err := protocol.Call[protocol.Message](context.Background(), p.net.Conn("mallory"), to, m); !errors.Is(err, ErrNotLeader) {
						t.Errorf("%T from a stranger to the %s: %v, want %v", m, to, err, ErrNotLeader)
					}
				}
			}
			if err := p.leader.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			p.checkVerified(t, 1, map[string]int{})
		})
	}
}

// TestVerifiedUploadChecks: each dataset takes the uploads of its
// backend only (additive, verified or unverified DCF); a verified dataset
// needs the verification key, and only a DCF dataset can be unverified.
func TestVerifiedUploadChecks(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 1, 1, nil)
	if err := newParty(t, 0.5).UploadKeys(ctx, p.servers); err == nil {
		t.Error("DCF keys accepted by an additive dataset")
	}
	q := newPair(t, DCF, 1, 1, nil)
	if err := newParty(t, 0.5).UploadVerified(ctx, q.servers); err == nil {
		t.Error("a verified report accepted by an unverified DCF dataset")
	}
	if err := newParty(t, 0.5).UploadVerifiedKeys(ctx, q.servers); err == nil {
		t.Error("a verified DCF report accepted by an unverified DCF dataset")
	}
	v := newVerifiedPair(t, DCF)
	if err := newParty(t, 0.5).UploadKeys(ctx, v.servers); err == nil {
		t.Error("unverified DCF keys accepted by a verified DCF dataset")
	}
	if err := newParty(t, 0.5).UploadVerified(ctx, v.servers); err == nil {
		t.Error("an additive report accepted by a verified DCF dataset")
	}
	for _, srv := range []*Server{p.helper, v.helper} {
		d := srv.datasets["d"].Dataset
		if _, err := New(Config{Role: Helper, Ledger: srv.cfg.Ledger, Datasets: []Dataset{d}}); err == nil {
			t.Errorf("verified %s dataset without a verification key accepted", d.Backend)
		}
	}
	add := p.helper.datasets["d"].Dataset
	add.Unverified = true
	if _, err := New(Config{Role: Helper, Ledger: p.helper.cfg.Ledger, Datasets: []Dataset{add}, VerifyKey: testVerifyKey}); err == nil {
		t.Error("an unverified additive dataset accepted")
	}
}

// TestVerifyWaitsForTheHelpersUploads: reports the helper does not hold
// yet stay undecided, however many (more than a batch), while the others
// are verified; once the helper has them, a later run verifies them.
func TestVerifyWaitsForTheHelpersUploads(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 1<<50, 1, nil)
	var late []party.Report
	for k := range verifyBatch + 20 {
		q := newParty(t, float64(k%10)/10)
		r, err := q.VerifiedReport(nil)
		if err != nil {
			t.Fatal(err)
		}
		up := &protocol.Upload{Dataset: "d", Report: r.ID, Public: r.Public, Share: r.Shares[0]}
		if _, err := protocol.Call[*protocol.Ack](ctx, p.servers.Conn, "leader", up); err != nil {
			t.Fatal(err)
		}
		late = append(late, r)
	}
	p.uploadVerified(t, 0.2, 0.4)
	if err := p.leader.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, 2, map[string]int{})
	for _, r := range late {
		up := &protocol.Upload{Dataset: "d", Report: r.ID, Public: r.Public, Share: r.Shares[1]}
		if _, err := protocol.Call[*protocol.Ack](ctx, p.servers.Conn, "helper", up); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.leader.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, len(late)+2, map[string]int{})
}

// TestReplayedReportsCountOnce plays a party that re-sends an honest
// party's report: under its own report ID it is a duplicate, counted
// once; under another ID (another nonce) it does not verify, so no
// report can be counted twice.
func TestReplayedReportsCountOnce(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 1<<50, 1, nil)
	honest := newParty(t, 0.3)
	r, err := honest.VerifiedReport(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := party.Upload(ctx, p.servers, r); err != nil {
		t.Fatal(err)
	}
	replays := []party.Report{r, r}
	replays[1].ID, _ = payload.NewID()
	for _, again := range replays {
		servers := p.servers
		servers.Conn = p.net.Conn("mallory")
		if err := party.Upload(ctx, servers, again); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.leader.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, 1, map[string]int{"mismatch": 1})
}

// TestUploadCheckRejectsUndecodableShares: a report whose public share
// does not decode is refused on upload as malformed, naming it, and
// counted as rejected at both servers.
func TestUploadCheckRejectsUndecodableShares(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 1<<50, 1, nil)
	r, err := newParty(t, 0.3).VerifiedReport(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Public = r.Public[:10]
	err = party.Upload(ctx, p.servers, r)
	if !errors.Is(err, verify.ErrMalformed) || !strings.Contains(err.Error(), r.ID.String()) {
		t.Fatalf("upload of a truncated public share: %v, want %v naming the report", err, verify.ErrMalformed)
	}
	if err := p.leader.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, 0, map[string]int{"malformed": 1})
}

// newVerifiedPair returns a pair serving a verified dataset of backend b
// with a budget no test exhausts.
func newVerifiedPair(t *testing.T, b Backend) *pair {
	t.Helper()
	return newPairOf(t, Dataset{Name: "d", Backend: b, Bins: bins, Budget: ledger.Budget{Epsilon: 1 << 50}, MinReports: 1}, nil)
}

// TestTentativeReportsCountOnceTowardsTheCap: a report the helper has
// answered for but not yet seen decided is one held report, not two,
// against MaxReports.
func TestTentativeReportsCountOnceTowardsTheCap(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) {
			p := newPairOf(t, Dataset{Name: "d", Backend: b, Bins: bins, Budget: ledger.Budget{Epsilon: 1 << 50}, MinReports: 1, MaxReports: 3}, nil)
			ids := p.uploadVerified(t, 0.1, 0.5)
			batch, err := p.leader.prepareBatch(p.leader.datasets["d"], ids, map[payload.ReportID]bool{}, true)
			if err != nil {
				t.Fatal(err)
			}
			prepare := &protocol.Prepare{Dataset: "d", Items: batch.items}
			if _, err := protocol.Call[*protocol.Prepared](context.Background(), p.leader.cfg.Conn, p.leader.cfg.Peer, prepare); err != nil {
				t.Fatal(err)
			}
			if n := p.helper.datasets["d"].undecided(); n != len(ids) {
				t.Errorf("the helper holds %d undecided reports, want %d", n, len(ids))
			}
			p.uploadVerified(t, 0.9) // the third of at most 3, at both servers
		})
	}
}

// TestDecidedReportCountsOnce: a report decided already is not counted
// again when a decision on it comes again (the servers refuse replays
// by their verdicts, not by a second set of report IDs): it is a replay.
func TestDecidedReportCountsOnce(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) {
			p := newVerifiedPair(t, b)
			id := p.uploadVerified(t, 0.3)[0]
			if err := p.leader.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, srv := range []*Server{p.leader, p.helper} {
				srv.mu.Lock()
				v := srv.datasets["d"].verified
				again := v.decide(srv.cfg.Role, id, protocol.VerdictOK, v.counted[id], nil, nil)
				n, replays := v.scheme.accepted(), v.rejected["replay"]
				srv.mu.Unlock()
				if again || n != 1 || replays != 1 {
					t.Errorf("%s: decided again: accepted %v, %d counted, %d replays; want false, 1, 1", srv.cfg.Role, again, n, replays)
				}
			}
		})
	}
}
