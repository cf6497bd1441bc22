package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
)

// corruptLeader plays the leader of an additive deployment against a real
// helper: it acknowledges and records every party's upload and shares
// (as a leader sees them), and drives the helper with raw protocol
// messages sent as "leader", deviating as it likes.
type corruptLeader struct {
	t       *testing.T
	net     *transport.Network
	helper  *Server
	parties []*party.Party
	mu      sync.Mutex
	shares  map[payload.QueryID]map[payload.ReportID][]uint64 // first copy
}

// newCorruptLeader deploys a real helper and the corrupt leader, and has
// one party per score enrol, each from its own peer.
func newCorruptLeader(t *testing.T, scores ...float64) *corruptLeader {
	t.Helper()
	ds := []Dataset{{Name: "d", Backend: Additive, Bins: bins, Budget: ledger.Budget{Epsilon: 10}, MinReports: 1}}
	helper, err := New(Config{Role: Helper, Peer: "leader", Ledger: ledger.NewMemory(), Datasets: ds})
	if err != nil {
		t.Fatal(err)
	}
	l := &corruptLeader{t: t, net: transport.NewNetwork(), helper: helper, shares: make(map[payload.QueryID]map[payload.ReportID][]uint64)}
	l.net.Register("helper", helper.Handle)
	l.net.Register("leader", l.handle)
	for k, x := range scores {
		p := newParty(t, x)
		if err := p.Enrol(context.Background(), l.servers(k)); err != nil {
			t.Fatal(err)
		}
		l.parties = append(l.parties, p)
	}
	return l
}

// servers is how party k reaches the servers: over its own peer.
func (l *corruptLeader) servers(k int) party.Servers {
	return party.Servers{Conn: l.net.Conn(transport.PeerID(fmt.Sprintf("party-%d", k))), Leader: "leader", Helper: "helper", Dataset: "d"}
}

// handle acknowledges uploads and records shares.
func (l *corruptLeader) handle(_ context.Context, _ transport.PeerID, req []byte) []byte {
	msg, err := protocol.Decode(req)
	if err != nil {
		return protocol.Encode(&protocol.Error{Text: err.Error()})
	}
	if m, ok := msg.(*protocol.Shares); ok {
		l.mu.Lock()
		if l.shares[m.Query] == nil {
			l.shares[m.Query] = make(map[payload.ReportID][]uint64)
		}
		if l.shares[m.Query][m.Report] == nil {
			l.shares[m.Query][m.Report] = m.Values
		}
		l.mu.Unlock()
	}
	return protocol.Encode(&protocol.Ack{})
}

// call sends the helper m as the leader.
func callAsLeader[T protocol.Message](l *corruptLeader, m protocol.Message) T {
	l.t.Helper()
	resp, err := protocol.Call[T](context.Background(), l.net.Conn("leader"), "helper", m)
	if err != nil {
		l.t.Fatal(err)
	}
	return resp
}

// release creates a Count release at ε = 1 over every party's report.
func (l *corruptLeader) release() payload.ReleaseID {
	ids := make([]payload.ReportID, len(l.parties))
	for k, p := range l.parties {
		ids[k] = p.ReportID()
	}
	slices.SortFunc(ids, payload.CompareIDs)
	id, _ := payload.NewID()
	callAsLeader[*protocol.ReleaseCreated](l, &protocol.CreateRelease{Dataset: "d", Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1}, Components: []payload.Component{payload.Count}, Reports: len(ids), Digest: payload.Digest(ids)})
	return id
}

// open registers a Count batch over prefixes at the helper.
func (l *corruptLeader) open(prefixes []int) *protocol.OpenQuery {
	qid, _ := payload.NewID()
	open := &protocol.OpenQuery{Dataset: "d", Query: qid, Component: payload.Count, Prefixes: prefixes}
	callAsLeader[*protocol.Ack](l, open)
	return open
}

// answer has every party answer the batch, asks the helper, and returns
// the helper's answer and what the leader reconstructs from it: the
// helper's values plus every share the leader recorded.
func (l *corruptLeader) answer(rel payload.ReleaseID, open *protocol.OpenQuery) (helper, sum []uint64) {
	l.t.Helper()
	for k, p := range l.parties {
		if err := p.SendShares(context.Background(), l.servers(k), open); err != nil {
			l.t.Fatal(err)
		}
	}
	ans := callAsLeader[*protocol.Answer](l, &protocol.Query{Dataset: "d", Release: rel, Query: open.Query, Component: open.Component, Prefixes: open.Prefixes})
	sum = slices.Clone(ans.Values)
	for _, shares := range l.shares[open.Query] {
		for j, v := range shares {
			sum[j] += v
		}
	}
	return ans.Values, sum
}

func allPrefixes() []int {
	p := make([]int, bins)
	for j := range p {
		p[j] = j + 1
	}
	return p
}

// TestCorruptLeaderCannotDifferenceTwoBatches plays the attack of issue
// 12: the leader runs one batch of a release honestly, and a second in
// which, before the victim answers, it sends the helper the victim's
// share as 0 in the victim's name. Old code took that first copy: the
// second answer lacked the victim, and answer₁ − (answer₂ − the victim's
// leader share) was the victim's 1[bin ≤ i] exactly, noise and all
// cancelled, at one ε. Now the forgery is refused and the helper answers
// each prefix from the share set it first answered it from, so both
// batches give the same answer and the difference is a pseudorandom
// share, not the indicator.
func TestCorruptLeaderCannotDifferenceTwoBatches(t *testing.T) {
	l := newCorruptLeader(t, 0.1, 0.3, 0.5, 0.9, 0.95)
	victim := l.parties[1] // bin 5 of 16
	rel := l.release()
	prefixes := allPrefixes()

	helper1, sum1 := l.answer(rel, l.open(prefixes))

	open := l.open(prefixes)
	forged := &protocol.Shares{Dataset: "d", Query: open.Query, Batch: open.Digest(), Report: victim.ReportID(), Values: make([]uint64, len(prefixes))}
	if _, err := l.helper.handle(context.Background(), "leader", forged); !errors.Is(err, ErrWrongSender) {
		t.Errorf("the leader's forged share of the victim: error %v, want ErrWrongSender", err)
	}
	helper2, sum2 := l.answer(rel, open)

	if !slices.Equal(helper1, helper2) {
		t.Errorf("the helper answered the same prefixes of one release differently in two batches:\n%v\n%v", helper1, helper2)
	}
	victimLeaderShare := l.shares[open.Query][victim.ReportID()]
	revealed := 0
	for j, i := range prefixes {
		diff := sum1[j] - (sum2[j] - victimLeaderShare[j])
		if indicator := uint64(max(0, min(1, i-victim.Bin()+1))); diff == indicator { // 1[bin ≤ i]
			revealed++
		}
	}
	if revealed == len(prefixes) {
		t.Errorf("the two-batch difference is the victim's indicator 1[bin ≤ i] at all %d prefixes", revealed)
	}
}

// TestHelperAnswersEachPrefixFromOneShareSet: a party whose shares change
// between batches (hostile, or a leader holding its peer identity) does
// not change the helper's answer of a prefix it has answered: a later
// batch of overlapping prefixes gets the first share sums at the old
// prefixes and its own only at the new ones, so mixing prefixes across
// batches yields nothing a single batch would not.
func TestHelperAnswersEachPrefixFromOneShareSet(t *testing.T) {
	l := newCorruptLeader(t, 0.2, 0.6)
	rel := l.release()
	first, _ := l.answer(rel, l.open([]int{2, 4, 8}))

	// Party 0 sends its batch-2 share as 0 at every prefix: were it used,
	// the helper's sum would move by its true share.
	open := l.open([]int{4, 8, 12})
	shifted := &protocol.Shares{Dataset: "d", Query: open.Query, Batch: open.Digest(), Report: l.parties[0].ReportID(), Values: make([]uint64, 3)}
	if _, err := protocol.Call[*protocol.Ack](context.Background(), l.servers(0).Conn, "helper", shifted); err != nil {
		t.Fatal(err)
	}
	for k, p := range l.parties[1:] {
		if err := p.SendShares(context.Background(), l.servers(k+1), open); err != nil {
			t.Fatal(err)
		}
	}
	ans := callAsLeader[*protocol.Answer](l, &protocol.Query{Dataset: "d", Release: rel, Query: open.Query, Component: payload.Count, Prefixes: open.Prefixes})
	if ans.Values[0] != first[1] || ans.Values[1] != first[2] {
		t.Errorf("prefixes 4 and 8 answered %d, %d in the second batch, %d, %d in the first", ans.Values[0], ans.Values[1], first[1], first[2])
	}
	// Prefix 12 was new in batch 2, so it is fixed from batch 2 (with
	// party 0's 0): an honest third batch does not change it.
	third, _ := l.answer(rel, l.open([]int{12, 16}))
	if third[0] != ans.Values[2] {
		t.Errorf("prefix 12 answered %d after being fixed at %d", third[0], ans.Values[2])
	}
}

// TestShareIntake: each server accepts a report's shares only from the
// peer that enrolled it, only for an open batch and only if computed for
// that batch; an identical re-send is a duplicate, a different one is
// refused; an enrolment of a taken report ID from another peer is
// refused.
func TestShareIntake(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 10, 1, nil)
	victim := newParty(t, 0.3)
	if err := victim.Enrol(ctx, p.servers); err != nil {
		t.Fatal(err)
	}
	open := &protocol.OpenQuery{Dataset: "d", Component: payload.Count, Prefixes: []int{4, bins}}
	open.Query, _ = payload.NewID()
	if _, err := protocol.Call[*protocol.Ack](ctx, p.net.Conn("analyst"), "leader", open); err != nil {
		t.Fatal(err)
	}
	leader, helper, _ := victim.AdditiveShares(payload.Count, open.Prefixes)
	genuine := func(values []uint64) *protocol.Shares {
		return &protocol.Shares{Dataset: "d", Query: open.Query, Batch: open.Digest(), Report: victim.ReportID(), Values: values}
	}
	other := *open
	other.Prefixes = []int{5, bins}
	closed, _ := payload.NewID()
	const self = "party" // the peer newPair's parties use
	for _, s := range []struct {
		srv    *Server
		server transport.PeerID
		other  transport.PeerID // the other server
		shares []uint64
	}{{p.leader, "leader", "helper", leader}, {p.helper, "helper", "leader", helper}} {
		for _, tc := range []struct {
			name string
			from transport.PeerID
			msg  protocol.Message
			want error // nil: a fresh (Duplicate false) or duplicate ack
			dup  bool
		}{
			{"forged by the other server", s.other, genuine(make([]uint64, 2)), ErrWrongSender, false},
			{"forged by a stranger", "mallory", genuine(s.shares), ErrWrongSender, false},
			{"batch not open", self, &protocol.Shares{Dataset: "d", Query: closed, Batch: open.Digest(), Report: victim.ReportID(), Values: s.shares}, ErrNoBatch, false},
			{"computed for other prefixes", self, &protocol.Shares{Dataset: "d", Query: open.Query, Batch: other.Digest(), Report: victim.ReportID(), Values: s.shares}, ErrOtherBatch, false},
			{"genuine", self, genuine(s.shares), nil, false},
			{"identical re-send", self, genuine(s.shares), nil, true},
			{"different second copy", self, genuine([]uint64{s.shares[0] + 1, s.shares[1]}), ErrConflictingShares, false},
			{"enrolment of the ID from another peer", "mallory", &protocol.Upload{Dataset: "d", Report: victim.ReportID()}, ErrWrongSender, false},
			{"enrolment again from its own peer", self, &protocol.Upload{Dataset: "d", Report: victim.ReportID()}, nil, true},
		} {
			t.Run(string(s.server)+"/"+tc.name, func(t *testing.T) {
				resp, err := s.srv.handle(ctx, tc.from, tc.msg)
				if tc.want != nil {
					if !errors.Is(err, tc.want) {
						t.Fatalf("error %v, want %v", err, tc.want)
					}
					if !strings.Contains(err.Error(), victim.ReportID().String()) {
						t.Errorf("error %q does not name the report", err)
					}
					return
				}
				if ack, ok := resp.(*protocol.Ack); err != nil || !ok || ack.Duplicate != tc.dup {
					t.Fatalf("answer %+v, %v; want an ack with Duplicate %v", resp, err, tc.dup)
				}
			})
		}
	}
}

// TestAnalystCannotMisdirectAVictimsShares: the parties learn a batch
// from whoever relays it (the analyst, in aggregation/local). Old code took shares
// without checking what they were computed for, so an analyst who told
// the victim "prefix N" in a batch registered as prefix i got, from two
// batches, c(i) + η_i and c(i) − 1[bin ≤ i] + 1 + η_i: the victim's
// indicator, exactly, with no corrupt server at all. Now both servers
// refuse shares whose batch digest is not the registered batch's, and
// the batch cannot be answered without the victim.
func TestAnalystCannotMisdirectAVictimsShares(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, Additive, 10, 1, nil)
	parties := []*party.Party{newParty(t, 0.1), newParty(t, 0.5), newParty(t, 0.8)}
	victim := parties[1] // bin 9 of 16
	for _, q := range parties {
		if err := q.Enrol(ctx, p.servers); err != nil {
			t.Fatal(err)
		}
	}
	rel, _, err := p.release(1)
	if err != nil {
		t.Fatal(err)
	}
	analyst := p.net.Conn("analyst")
	batch := func(lie bool) (*protocol.Answer, error) {
		open := &protocol.OpenQuery{Dataset: "d", Component: payload.Count, Prefixes: []int{4}}
		open.Query, _ = payload.NewID()
		if _, err := protocol.Call[*protocol.Ack](ctx, analyst, "leader", open); err != nil {
			t.Fatal(err)
		}
		for _, q := range parties {
			told := open
			if lie && q == victim {
				told = &protocol.OpenQuery{Dataset: "d", Query: open.Query, Component: payload.Count, Prefixes: []int{bins}}
			}
			err := q.SendShares(ctx, p.servers, told)
			if lie && q == victim && !errors.Is(err, ErrOtherBatch) {
				t.Errorf("the victim's shares for a misdirected batch: %v, want refused (%v)", err, ErrOtherBatch)
			}
		}
		return protocol.Call[*protocol.Answer](ctx, analyst, "leader", &protocol.Query{Dataset: "d", Release: rel, Query: open.Query, Component: payload.Count, Prefixes: open.Prefixes})
	}
	honest, err := batch(false)
	if err != nil {
		t.Fatal(err)
	}
	misdirected, err := batch(true)
	if err == nil && misdirected.Values[0]-honest.Values[0] == 1 {
		t.Fatal("the misdirected batch moved prefix 4 by the victim's 1 − 1[bin ≤ 4] = 1")
	}
	if err == nil || !strings.Contains(err.Error(), victim.ReportID().String()) {
		t.Errorf("query of the misdirected batch: %v, want refused for lack of the victim's shares", err)
	}
}
