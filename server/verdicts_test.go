package server

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// durable is what a server of a restartable pair keeps across a crash:
// its ledger, releases, verdicts and stored uploads (in order), as
// package deploy keeps them in its store.
type durable struct {
	mu       sync.Mutex
	ledger   ledger.Ledger
	releases ReleaseStore
	verdicts memoryVerdicts
	uploads  [][]byte
	// db, if not nil, is a database the server's verdicts are saved to
	// (instead of verdicts) and its acknowledged uploads recorded in
	// (besides uploads), as package deploy's store does.
	db durableDB
}

// durableDB is what a durable's database keeps: the server's verdicts
// and the uploads it acknowledged (internal/store's PostgreSQL store).
type durableDB interface {
	VerdictStore
	PutReport(dataset string, id payload.ReportID, upload []byte) error
	Reports(dataset string, fn func(id payload.ReportID, upload []byte) error) error
}

// verdictStore is where the server on d saves its verdicts.
func (d *durable) verdictStore() VerdictStore {
	if d.db != nil {
		return d.db
	}
	return d.verdicts
}

// Uploads implements ReportStore over the stored uploads.
func (d *durable) Uploads(dataset string, ids []payload.ReportID, fn func(payload.ReportID, []byte) error) error {
	d.mu.Lock()
	byID := make(map[payload.ReportID][]byte, len(d.uploads))
	for _, b := range d.uploads {
		byID[mustDecode(b).(*protocol.Upload).Report] = b
	}
	d.mu.Unlock()
	for _, id := range ids {
		b, ok := byID[id]
		if !ok {
			return fmt.Errorf("report %v of dataset %q not stored", id, dataset)
		}
		if err := fn(id, b); err != nil {
			return err
		}
	}
	return nil
}

// restartable is a pair whose servers can crash and start again from
// what they made durable.
type restartable struct {
	*pair
	backend Backend
	store   [2]*durable // leader, helper
	// ahead: a restarted server re-derives the accepted reports'
	// outputs ahead of the replay (Server.PrepareReplay), as deploy does.
	ahead bool
	// unverified: the dataset is unverified dcf (folded at ingestion).
	unverified bool
}

// newRestartable returns a restartable pair serving a verified dataset of
// backend b.
func newRestartable(t *testing.T, b Backend) *restartable {
	t.Helper()
	return newRestartableOf(t, b, false)
}

// newRestartableOf returns a restartable pair serving a dataset of
// backend b, unverified if unverified (dcf only).
func newRestartableOf(t *testing.T, b Backend, unverified bool) *restartable {
	t.Helper()
	r := &restartable{pair: &pair{net: transport.NewNetwork()}, backend: b, unverified: unverified}
	for i := range r.store {
		r.store[i] = &durable{ledger: ledger.NewMemory(), releases: newMemoryReleases(), verdicts: memoryVerdicts{}}
	}
	r.servers = newPair(t, Additive, 1, 1, nil).servers
	r.servers.Conn = r.net.Conn("party")
	r.restart(t, Leader)
	r.restart(t, Helper)
	return r
}

// restart starts the server of role afresh on its durable state: it
// loads its releases and verdicts and is handed every stored upload
// again, as package deploy replays its store.
func (r *restartable) restart(t *testing.T, role Role) {
	t.Helper()
	st := r.store[role]
	srv, err := New(r.config(role))
	if err != nil {
		t.Fatal(err)
	}
	if r.ahead {
		r.rederive(t, srv, st.uploads)
	}
	for _, up := range st.uploads {
		if _, err := protocol.Decode(srv.Handle(context.Background(), "store", up)); err != nil {
			t.Fatal(err)
		}
		m, _ := protocol.Decode(up)
		srv.Stored("d", m.(*protocol.Upload).Report)
	}
	if v := srv.datasets["d"].verified; v != nil && len(v.rederived) != 0 {
		t.Fatalf("%d outputs re-derived ahead were not used by the replay", len(v.rederived))
	}
	handle := func(ctx context.Context, from transport.PeerID, req []byte) []byte {
		resp := srv.Handle(ctx, from, req)
		m, _ := protocol.Decode(req)
		if up, ok := m.(*protocol.Upload); ok {
			if _, acked := mustDecode(resp).(*protocol.Ack); acked {
				st.mu.Lock()
				st.uploads = append(st.uploads, req)
				st.mu.Unlock()
				if st.db != nil {
					if err := st.db.PutReport("d", up.Report, req); err != nil {
						t.Error(err)
					}
				}
				srv.Stored("d", up.Report)
			}
		}
		return resp
	}
	if role == Leader {
		r.leader = srv
		r.net.Register("leader", handle)
		if err := srv.CheckPeer(context.Background()); err != nil && r.helper != nil {
			t.Fatal(err)
		}
		return
	}
	r.helper = srv
	r.net.Register("helper", handle)
}

// config is the configuration of the server of role on its durable
// state.
func (r *restartable) config(role Role) Config {
	st := r.store[role]
	cfg := Config{Role: role, Peer: "leader", Ledger: st.ledger, Releases: st.releases, Verdicts: st.verdictStore(), Reports: st,
		Datasets: []Dataset{{Name: "d", Backend: r.backend, Unverified: r.unverified, Bins: bins, Budget: ledger.Budget{Epsilon: 1 << 50}, MinReports: 1}},
		Manifest: testManifest, VerifyKey: testVerifyKey}
	if role == Leader {
		cfg.Peer, cfg.Conn = "helper", r.net.Conn("leader")
	}
	return cfg
}

// rederive has srv re-derive ahead the outputs of the reports among
// uploads accepted before its restart, which it must hold after: as many
// as the verdicts accepted in its store.
func (r *restartable) rederive(t *testing.T, srv *Server, uploads [][]byte) {
	t.Helper()
	ups := make([]*protocol.Upload, len(uploads))
	for i, b := range uploads {
		ups[i] = mustDecode(b).(*protocol.Upload)
	}
	rejected, err := srv.PrepareReplay("d", uploads)
	if err != nil {
		t.Fatal(err)
	}
	v := srv.datasets["d"].verified
	want := 0
	for _, up := range ups {
		if verdict, ok := v.verdict(up.Report); ok && verdict != protocol.VerdictOK {
			want++
		}
	}
	if len(rejected) != want || want == 0 {
		t.Fatalf("%d stored uploads rejected, want %d (and some)", len(rejected), want)
	}
	if len(v.rederived) != len(v.restore) || len(v.restore) == 0 {
		t.Fatalf("%d outputs re-derived ahead, for %d accepted reports", len(v.rederived), len(v.restore))
	}
}

// memoryVerdicts is a VerdictStore in memory: what a restartable pair's
// servers keep across a crash.
type memoryVerdicts map[string]map[payload.ReportID][]byte

func (m memoryVerdicts) SaveVerdicts(dataset string, records map[payload.ReportID][]byte) error {
	if m[dataset] == nil {
		m[dataset] = make(map[payload.ReportID][]byte)
	}
	maps.Copy(m[dataset], records)
	return nil
}

func (m memoryVerdicts) LoadVerdicts(dataset string, fn func(payload.ReportID, []byte) error) error {
	for id, b := range m[dataset] {
		if err := fn(id, b); err != nil {
			return err
		}
	}
	return nil
}

func mustDecode(b []byte) protocol.Message {
	m, err := protocol.Decode(b)
	if err != nil {
		panic(err)
	}
	return m
}

// crashForgeries are two forgeries of each verified backend rejected at
// verification (not at upload), for two different reasons where the
// backend has them.
var crashForgeries = map[Backend][]int{
	Additive: {int(verify.CountTwo), int(verify.CopiedProof)},
	DCF:      {int(vdcf.CountTwo), int(vdcf.NotOneHot)},
}

// reasons counts the rejection reasons of the forgeries kinds of b.
func reasons(b Backend, kinds []int) map[string]int {
	want := map[string]int{}
	for _, k := range kinds {
		for _, f := range forgeries(b) {
			if f.kind == k {
				want[verify.Reason(f.want)]++
			}
		}
	}
	return want
}

// TestVerificationSurvivesCrashes crashes the leader or the helper at
// each point of the verification exchange one can reach from outside —
// a Prepare or a Decide lost before the helper sees it, or its answer
// lost after the helper acted on it — restarts it from its durable
// state, and checks that once verification runs again both servers count
// the same reports, reject the same, and release the honest count: no
// report counts at one server only. For both verified backends: the
// verified DCF's helper restores its tentative answers from the leader's
// stored first message, and a restarted leader tells its stored second
// message again.
func TestVerificationSurvivesCrashes(t *testing.T) {
	kinds := map[string]protocol.Kind{"prepare": protocol.KindPrepare, "decide": protocol.KindDecide}
	faults := map[string]transport.Fault{"request lost": transport.LoseRequest, "answer lost": transport.LoseResponse}
	for _, b := range verifiedBackends {
		for kindName, kind := range kinds {
			for faultName, fault := range faults {
				for _, victim := range []Role{Leader, Helper} {
					t.Run(fmt.Sprintf("%s/%s %s/%v crashes", b, kindName, faultName, victim), func(t *testing.T) {
						crashAt(t, b, kind, fault, victim)
					})
				}
			}
		}
	}
}

// crashAt loses the first message of kind (fault) while verifying, crashes
// victim, and checks both servers agree after verification runs again and
// after both restart.
func crashAt(t *testing.T, b Backend, kind protocol.Kind, fault transport.Fault, victim Role) {
	r := newRestartable(t, b)
	r.uploadVerified(t, 0.1, 0.5, 0.9, 0.3)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range crashForgeries[b] {
		r.forge(t, k, rng)
	}
	r.net.SetFaults(func(from, to transport.PeerID, req []byte) transport.Fault {
		if len(req) > 1 && protocol.Kind(req[1]) == kind {
			return fault
		}
		return transport.Deliver
	})
	if err := r.leader.Verify(context.Background()); !errors.Is(err, transport.ErrLinkCut) {
		t.Fatalf("verification over a cut link: %v", err)
	}
	r.net.SetFaults(nil)
	r.restart(t, victim)
	for range 2 {
		if err := r.leader.Verify(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := reasons(b, crashForgeries[b])
	r.checkVerified(t, 4, want)
	// Both restarted once more: the same again.
	r.restart(t, Helper)
	r.restart(t, Leader)
	if err := r.leader.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.checkVerified(t, 4, want)
	rel, n, err := r.release(1 << 48)
	if err != nil || n != 4 || r.total(t, rel) != 4 {
		t.Fatalf("release after the crash: %d reports, %v", n, err)
	}
}

// TestUnstoredUploadNotVerified: with a verdict store, a report whose
// upload the caller has not made durable yet is not verified (the
// helper answers that it lacks it), so no verdict is stored that a
// restarted server could not count again.
func TestUnstoredUploadNotVerified(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) {
			r := newRestartable(t, b)
			r.uploadVerified(t, 0.2)
			// An upload the helper accepted but whose storage has not
			// completed.
			r.net.Register("helper", r.helper.Handle)
			r.uploadVerified(t, 0.7)
			if err := r.leader.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			r.checkVerified(t, 1, map[string]int{})
		})
	}
}

// TestVerdictRecordKnownAnswer pins the stored verdict record: a
// restarted server reads the verdicts an older one saved. Changing it is
// a breaking change: bump verdictRecordVersion and update this hash.
// The acceptances' digest is uploadDigest of a fixed upload, which pins
// the digest too; a version 2 record (no digest) is still read.
func TestVerdictRecordKnownAnswer(t *testing.T) {
	const want = "92ffa1d81715a1f806fe6f7b41d0abd67413ccf01c1c5aff1d1e42937542ad73"
	digest := uploadDigest(&protocol.Upload{Dataset: "d", Report: payload.ReportID{1, 2, 3}, Public: []byte{4, 5}, Share: []byte{6, 7, 8}})
	h := sha256.New()
	for _, stage := range []byte{stageFinal, stageTentative} {
		for v := protocol.VerdictOK; v <= protocol.VerdictReplay; v++ {
			if v == protocol.VerdictMissing {
				continue
			}
			msgs := [][]byte{nil}
			if v == protocol.VerdictOK {
				msgs = append(msgs, []byte{0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18})
			}
			for _, msg := range msgs {
				b := verdictRecord(stage, v, digest, msg)
				h.Write(b)
				r, err := parseVerdictRecord(b)
				if err != nil || r.stage != stage || r.verdict != v || !bytes.Equal(r.msg, msg) || r.digested != (v == protocol.VerdictOK) || (r.digested && r.digest != digest) {
					t.Fatalf("parse(%x) = %+v, %v", b, r, err)
				}
			}
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("verdict records hash to %s, want %s", got, want)
	}
	for _, bad := range []struct {
		b    []byte
		want string
	}{
		{[]byte{1, stageFinal, 0}, "version 1 is not supported"},
		{[]byte{verdictRecordVersion, stageFinal, 0, 1, 2}, "want at least 35 (its upload's digest)"},
		{[]byte{verdictRecordVersion, 3, 0}, "unknown stage"},
		{[]byte{verdictRecordVersion, stageFinal, byte(protocol.VerdictMissing)}, "unknown verdict"},
		{[]byte{verdictRecordVersion, stageFinal, 99}, "unknown verdict"},
		{[]byte{verdictRecordVersion, stageFinal}, "of 2 bytes"},
		{[]byte{verdictRecordVersion, stageTentative, byte(protocol.VerdictProof), 1}, "rejection with a 1-byte message"},
		{nil, "empty"},
	} {
		if _, err := parseVerdictRecord(bad.b); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("parse(%x) = %v, want %q", bad.b, err, bad.want)
		}
	}
	old := []byte{verdictRecordVersionV2, stageTentative, byte(protocol.VerdictOK), 0xa1, 0xb2}
	if r, err := parseVerdictRecord(old); err != nil || r.digested || r.stage != stageTentative || !bytes.Equal(r.msg, old[3:]) {
		t.Errorf("the version 2 acceptance %x: %+v, %v; want it read, with no digest", old, r, err)
	}
}

// TestRestartedServerKeepsRejections: the rejected counts per reason
// survive a restart of both servers, whichever reports were refused at
// upload (malformed, never stored) or at verification, and so do the
// accepted reports and the released total: with the replay deriving each
// accepted report's output in turn, or with the outputs re-derived ahead
// in parallel (Server.PrepareReplay, as package deploy replays its
// store).
func TestRestartedServerKeepsRejections(t *testing.T) {
	for _, b := range verifiedBackends {
		for _, ahead := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ahead=%v", b, ahead), func(t *testing.T) {
				r := newRestartable(t, b)
				r.uploadVerified(t, 0.4, 0.6)
				rng := rand.New(rand.NewPCG(9, 9))
				want := map[string]int{}
				for _, f := range forgeries(b) {
					r.forge(t, f.kind, rng)
					want[verify.Reason(f.want)]++
				}
				if err := r.leader.Verify(context.Background()); err != nil {
					t.Fatal(err)
				}
				r.checkVerified(t, 2, want)
				before := maps.Clone(want)
				r.ahead = ahead
				r.restart(t, Leader)
				r.restart(t, Helper)
				r.checkVerified(t, 2, before)
				rel, _, err := r.release(1 << 48)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.total(t, rel); got != 2 {
					t.Errorf("released total %d, want 2", got)
				}
			})
		}
	}
}

// TestVerifyKeyNeverSent records every request and answer the two
// servers exchange with the parties, the analyst and each other through
// uploads, verification, a release, queries and status, and finds the
// shared verify key in none of them: no message returns it, to a party,
// an analyst or even the other server.
func TestVerifyKeyNeverSent(t *testing.T) {
	var key [verify.KeySize]byte
	crand.Read(key[:])
	p := newPair(t, Additive, 1<<50, 1, nil)
	p.rekey(t, key, key)
	var mu sync.Mutex
	var seen [][]byte
	for name, srv := range map[transport.PeerID]*Server{"leader": p.leader, "helper": p.helper} {
		p.net.Register(name, func(ctx context.Context, from transport.PeerID, req []byte) []byte {
			resp := srv.Handle(ctx, from, req)
			mu.Lock()
			seen = append(seen, req, resp)
			mu.Unlock()
			return resp
		})
	}
	p.uploadVerified(t, 0.1, 0.6)
	p.forge(t, int(verify.RandomProof), rand.New(rand.NewPCG(1, 2)))
	rel, _, err := p.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	if p.total(t, rel) != 2 {
		t.Fatal("release over the wrong reports")
	}
	if len(seen) < 10 {
		t.Fatalf("only %d messages recorded", len(seen))
	}
	for _, b := range seen {
		if bytes.Contains(b, key[:8]) || bytes.Contains(b, key[8:16]) || bytes.Contains(b, key[16:24]) || bytes.Contains(b, key[24:]) {
			t.Fatalf("a message carries the verify key: %x", b)
		}
	}
}

// TestHelperWithAnotherKeyRejectsEverything: a helper holding another
// verify key than the leader's (a misconfigured or corrupt one) makes
// every report fail the proof check at both servers: nothing counts at
// either, every report is counted as rejected for the proof, and the
// release is refused for too few reports.
func TestHelperWithAnotherKeyRejectsEverything(t *testing.T) {
	p := newPair(t, Additive, 1<<50, 1, nil)
	other := testVerifyKey
	other[0] ^= 1
	p.rekey(t, testVerifyKey, other)
	p.uploadVerified(t, 0.1, 0.5, 0.9)
	if err := p.leader.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, 0, map[string]int{"proof": 3})
	if _, _, err := p.release(1 << 48); err == nil || !strings.Contains(err.Error(), "report") {
		t.Errorf("release over no verified report: %v", err)
	}
}

// rekey replaces both servers of p by fresh ones of the same dataset
// holding the verify keys leader and helper.
func (p *pair) rekey(t *testing.T, leader, helper [verify.KeySize]byte) {
	t.Helper()
	ds := []Dataset{{Name: "d", Backend: Additive, Bins: bins, Budget: ledger.Budget{Epsilon: 1 << 50}, MinReports: 1}}
	var err error
	if p.leader, err = New(Config{Role: Leader, Peer: "helper", Conn: p.net.Conn("leader"), Ledger: ledger.NewMemory(), Datasets: ds, Manifest: testManifest, VerifyKey: leader}); err != nil {
		t.Fatal(err)
	}
	if p.helper, err = New(Config{Role: Helper, Peer: "leader", Ledger: ledger.NewMemory(), Datasets: ds, Manifest: testManifest, VerifyKey: helper}); err != nil {
		t.Fatal(err)
	}
	p.net.Register("leader", p.leader.Handle)
	p.net.Register("helper", p.helper.Handle)
	if err := p.leader.CheckPeer(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRejectedReportRefusedAgain: the stored upload of a report rejected
// at verification, uploaded again (a party's retry, or a replay by an
// adversary), is refused at each server with its rejection's reason,
// not acknowledged as a duplicate, and the rejection counts once, also
// after both servers restart and skip it in their replay
// (PrepareReplay).
func TestRejectedReportRefusedAgain(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) {
			r := newRestartable(t, b)
			r.uploadVerified(t, 0.5)
			r.forge(t, crashForgeries[b][0], rand.New(rand.NewPCG(5, 6)))
			if err := r.leader.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			want, err := r.leader.Rejected("d")
			if err != nil || len(want) != 1 {
				t.Fatalf("rejected %v, %v; want one forgery", want, err)
			}
			uploadAgain := func() {
				t.Helper()
				for role, srv := range []*Server{r.leader, r.helper} {
					refused := 0
					for _, up := range r.store[role].uploads {
						id := mustDecode(up).(*protocol.Upload).Report
						verdict, _ := srv.datasets["d"].verified.verdict(id)
						resp := mustDecode(srv.Handle(context.Background(), "mallory", up))
						if verdict == protocol.VerdictOK {
							continue
						}
						refused++
						if e, ok := resp.(*protocol.Error); !ok || !strings.Contains(e.Text, verdicts[verdict].Error()) {
							t.Errorf("%s: the rejected report uploaded again: %v, want refused for %v", srv.cfg.Role, resp, verdicts[verdict])
						}
					}
					if refused != 1 {
						t.Errorf("%s: %d rejected uploads stored, want 1", srv.cfg.Role, refused)
					}
				}
				r.checkVerified(t, 1, want)
			}
			uploadAgain()
			r.ahead = true
			r.restart(t, Leader)
			r.restart(t, Helper)
			uploadAgain()
		})
	}
}

// TestStolenHelperStoreHoldsNoLeaderOpenings: the verified DCF helper's
// tentative records, written before it answers a Prepare, keep its own
// shares of the check values, not the leader's first messages (whose
// openings, under a challenge that outlived its report, let a party solve
// for it: internal/vdcf TestLeakedMessagesDoNotForge); and a helper
// restarted on them answers and settles as before.
func TestStolenHelperStoreHoldsNoLeaderOpenings(t *testing.T) {
	r := newRestartable(t, DCF)
	r.uploadVerified(t, 0.1, 0.5, 0.9, 0.3)
	var leaderMsgs [][]byte
	r.net.SetFaults(func(from, to transport.PeerID, req []byte) transport.Fault {
		if len(req) > 1 && protocol.Kind(req[1]) == protocol.KindPrepare {
			for _, it := range mustDecode(req).(*protocol.Prepare).Items {
				leaderMsgs = append(leaderMsgs, it.Message)
			}
			return transport.LoseResponse
		}
		return transport.Deliver
	})
	if err := r.leader.Verify(context.Background()); !errors.Is(err, transport.ErrLinkCut) {
		t.Fatalf("verification over a cut link: %v", err)
	}
	r.net.SetFaults(nil)
	tentative := 0
	for id, b := range r.store[Helper].verdicts["d"] {
		rec, err := parseVerdictRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		stage, msg := rec.stage, rec.msg
		if stage == stageTentative {
			tentative++
		}
		for _, lm := range leaderMsgs {
			if len(lm) > 0 && bytes.Contains(msg, lm) {
				t.Errorf("report %v: the helper's stored record holds the leader's first message", id)
			}
		}
	}
	if tentative != 4 || len(leaderMsgs) != 4 {
		t.Fatalf("%d tentative records, %d leader messages seen, want 4 and 4: the test has no power", tentative, len(leaderMsgs))
	}
	r.restart(t, Helper)
	if err := r.leader.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.checkVerified(t, 4, map[string]int{})
}
