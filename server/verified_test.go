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

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/party"
)

// uploadVerified has one honest party per score upload its verified
// report, and returns their report IDs.
func (p *pair) uploadVerified(t *testing.T, scores ...float64) []payload.ReportID {
	t.Helper()
	var ids []payload.ReportID
	for _, x := range scores {
		q := newParty(t, x)
		if err := q.UploadVerified(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.ReportID())
	}
	return ids
}

// forge uploads an invalid report of kind k from its own peer.
func (p *pair) forge(t *testing.T, k verify.Forgery, rng *rand.Rand) {
	t.Helper()
	s, err := verify.New(bins)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := payload.NewID()
	r, err := s.Forge(k, id, rng.IntN(bins), rng.IntN(2) == 1, crand.Reader, rng)
	if err != nil {
		t.Fatal(err)
	}
	servers := p.servers
	servers.Conn = p.net.Conn(transport.PeerID("mallory-" + id.String()))
	if err := party.UploadReport(context.Background(), servers, r); err != nil && !errors.Is(err, verify.ErrMalformed) {
		t.Fatal(err)
	}
}

// checkVerified checks that both servers counted the same reports (n of
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
		if ids[i], err = srv.ReportIDs("d"); err != nil {
			t.Fatal(err)
		}
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
	for _, k := range verify.Forgeries() {
		t.Run(k.Name, func(t *testing.T) {
			p := newPair(t, Additive, 1<<50, 1, nil)
			p.uploadVerified(t, 0.1, 0.5, 0.5)
			p.forge(t, k.Kind, rng)
			p.forge(t, k.Kind, rng)
			if err := p.leader.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			p.checkVerified(t, 3, map[string]int{verify.Reason(k.Want): 2})
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
			p := newPair(t, Additive, 1<<50, 1, nil)
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
	for name, lose := range map[string]protocol.Kind{"prepared": protocol.KindPrepare, "decide": protocol.KindDecide} {
		t.Run(name, func(t *testing.T) {
			p := newPair(t, Additive, 1<<50, 1, nil)
			p.uploadVerified(t, 0.1, 0.5, 0.9)
			p.forge(t, verify.CountTwo, rand.New(rand.NewPCG(1, 1)))
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
			p.checkVerified(t, 3, map[string]int{"mismatch": 1})
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
	p := newPair(t, Additive, 1<<50, 1, nil)
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
}

// TestVerifiedUploadChecks: an additive dataset refuses a DCF key, and a
// DCF dataset a verified report; a server needs the verification key.
func TestVerifiedUploadChecks(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 1, 1, nil)
	if err := newParty(t, 0.5).UploadKeys(ctx, p.servers); err == nil {
		t.Error("DCF keys accepted by an additive dataset")
	}
	q := newPair(t, DCF, 1, 1, nil)
	if err := newParty(t, 0.5).UploadVerified(ctx, q.servers); err == nil {
		t.Error("a verified report accepted by a DCF dataset")
	}
	if _, err := New(Config{Role: Helper, Ledger: p.helper.cfg.Ledger, Datasets: []Dataset{p.helper.datasets["d"].Dataset}}); err == nil {
		t.Error("additive dataset without a verification key accepted")
	}
}

// TestVerifyWaitsForTheHelpersUploads: reports the helper does not hold
// yet stay undecided, however many (more than a batch), while the others
// are verified; once the helper has them, a later run verifies them.
func TestVerifyWaitsForTheHelpersUploads(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 1<<50, 1, nil)
	var late []verify.Report
	for k := range verifyBatch + 20 {
		q := newParty(t, float64(k%10)/10)
		r, err := q.VerifiedReport(nil)
		if err != nil {
			t.Fatal(err)
		}
		up := &protocol.Upload{Dataset: "d", Report: r.Nonce, Public: r.Public, Share: r.Shares[0]}
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
		up := &protocol.Upload{Dataset: "d", Report: r.Nonce, Public: r.Public, Share: r.Shares[1]}
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
	if err := party.UploadReport(ctx, p.servers, r); err != nil {
		t.Fatal(err)
	}
	replays := []verify.Report{r, r}
	replays[1].Nonce, _ = payload.NewID()
	for _, again := range replays {
		servers := p.servers
		servers.Conn = p.net.Conn("mallory")
		if err := party.UploadReport(ctx, servers, again); err != nil {
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
	err = party.UploadReport(ctx, p.servers, r)
	if !errors.Is(err, verify.ErrMalformed) || !strings.Contains(err.Error(), payload.ID(r.Nonce).String()) {
		t.Fatalf("upload of a truncated public share: %v, want %v naming the report", err, verify.ErrMalformed)
	}
	if err := p.leader.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, 0, map[string]int{"malformed": 1})
}
