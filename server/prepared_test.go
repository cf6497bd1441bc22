package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/party"
)

// memPreparations is a PreparationStore in memory, and the role's other
// processes: work prepares, in batches (each its own fold, as one
// process's lease), every upload the server kept and no batch prepared.
type memPreparations struct {
	mu       sync.Mutex
	reports  memoryReports
	p        *Preparer
	sketches map[core.ID][]byte
	digests  map[core.ID][sha256.Size]byte // of the uploads prepared
	folded   map[core.ID][sha256.Size]byte
	folds    [][]byte // nil: deleted
	foldOf   map[core.ID]int
	now      int // reports asked for by PrepareNow
}

func (m *memPreparations) Sketches(_ string, ids []core.ID) (map[core.ID][]byte, map[core.ID][sha256.Size]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out, digests := map[core.ID][]byte{}, map[core.ID][sha256.Size]byte{}
	for _, id := range ids {
		if sk, ok := m.sketches[id]; ok {
			out[id], digests[id] = sk, m.digests[id]
		}
	}
	return out, digests, nil
}

func (m *memPreparations) Folds(string) ([][]byte, map[core.ID][sha256.Size]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(m.folds), func(f []byte) bool { return f == nil }), maps.Clone(m.folded), nil
}

func (m *memPreparations) PrepareNow(_ string, ids []core.ID, prepare func([]core.ID, [][]byte) ([][]byte, []byte, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now += len(ids)
	var todo []core.ID
	var ups [][]byte
	for _, id := range ids {
		if _, done := m.sketches[id]; !done {
			todo, ups = append(todo, id), append(ups, m.reports["d"][id])
		}
	}
	if len(todo) == 0 {
		return nil
	}
	sk, fold, err := prepare(todo, ups)
	if err != nil {
		return err
	}
	m.record(todo, ups, sk, fold)
	return nil
}

// record records a batch's preparation, of the uploads ups.
func (m *memPreparations) record(ids []core.ID, ups, sk [][]byte, fold []byte) {
	for i, id := range ids {
		m.sketches[id], m.digests[id] = sk[i], sha256.Sum256(ups[i])
		if sk[i] != nil {
			m.folded[id] = sha256.Sum256(ups[i])
		}
		if sk[i] != nil && fold != nil {
			m.foldOf[id] = len(m.folds)
		}
	}
	if fold != nil {
		m.folds = append(m.folds, fold)
	}
}

// quarantine deletes the report's upload as the PostgreSQL store's
// quarantine does, its trigger with it: the report's preparation and
// the fold holding it go, that fold's other reports to be prepared
// again. keepFold is a mutant trigger that forgets the report was
// folded but keeps its fold, its output in it.
func (m *memPreparations) quarantine(t *testing.T, id core.ID, keepFold bool) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.reports["d"][id]; !ok {
		t.Fatalf("no stored upload of report %v to quarantine", id)
	}
	delete(m.reports["d"], id)
	k, folded := m.foldOf[id]
	for other, f := range m.foldOf {
		if other == id || folded && f == k && !keepFold {
			delete(m.sketches, other)
			delete(m.digests, other)
			delete(m.folded, other)
			delete(m.foldOf, other)
		}
	}
	delete(m.sketches, id)
	delete(m.digests, id)
	delete(m.folded, id)
	if folded && !keepFold {
		m.folds[k] = nil
	}
}

// work prepares the kept uploads not prepared yet, batch reports per
// lease.
func (m *memPreparations) work(t *testing.T, batch int) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []core.ID
	var ups [][]byte
	for id, up := range m.reports["d"] {
		if _, done := m.sketches[id]; !done {
			ids, ups = append(ids, id), append(ups, up)
		}
	}
	for start := 0; start < len(ids); start += batch {
		end := min(start+batch, len(ids))
		sk, fold, err := m.p.Prepare(ids[start:end], ups[start:end])
		if err != nil {
			t.Fatal(err)
		}
		m.record(ids[start:end], ups[start:end], sk, fold)
	}
}

// newPreparedPair is a verified DCF pair each of whose servers has its
// reports prepared by other processes (memPreparations).
func newPreparedPair(t *testing.T) (*pair, [2]*memPreparations) {
	t.Helper()
	var preps [2]*memPreparations
	return restartPrepared(t, &preps), preps
}

// restartPrepared is newPreparedPair over the stores preps (those nil
// made, into preps): each server, started afresh, is handed the uploads
// its store keeps, in ID order, as a restarted server replays them.
func restartPrepared(t *testing.T, preps *[2]*memPreparations) *pair {
	t.Helper()
	d := Dataset{Name: "d", Backend: DCF, Bins: bins, Budget: ledger.Budget{Epsilon: 1 << 50}, MinReports: 1}
	var srv [2]*Server
	net := transport.NewNetwork()
	for i, role := range []Role{Leader, Helper} {
		p, err := NewPreparer(d, role, testVerifyKey)
		if err != nil {
			t.Fatal(err)
		}
		if preps[i] == nil {
			preps[i] = &memPreparations{reports: memoryReports{}, p: p, sketches: map[core.ID][]byte{}, digests: map[core.ID][sha256.Size]byte{}, folded: map[core.ID][sha256.Size]byte{}, foldOf: map[core.ID]int{}}
		}
		cfg := Config{Role: role, Peer: "helper", Conn: net.Conn("leader"), Ledger: ledger.NewMemory(), Datasets: []Dataset{d},
			Manifest: testManifest, VerifyKey: testVerifyKey, Reports: preps[i].reports, Preparations: preps[i]}
		if role == Helper {
			cfg.Peer, cfg.Conn = "leader", nil
		}
		if srv[i], err = New(cfg); err != nil {
			t.Fatal(err)
		}
		keep, handle := preps[i].reports, srv[i].Handle
		net.Register(transport.PeerID(role.String()), func(ctx context.Context, from transport.PeerID, req []byte) []byte {
			if msg, err := protocol.Decode(req); err == nil {
				if up, ok := msg.(*protocol.Upload); ok { // recorded, as deploy stores it
					keep.keep(up)
				}
			}
			return handle(ctx, from, req)
		})
	}
	if err := srv[0].CheckPeer(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, prep := range preps {
		stored := prep.reports["d"]
		for _, id := range slices.SortedFunc(maps.Keys(stored), payload.CompareIDs) {
			if _, ok := mustDecode(srv[i].Handle(context.Background(), "store", stored[id])).(*protocol.Ack); !ok {
				t.Fatalf("the %s refused its stored upload of report %v", srv[i].cfg.Role, id)
			}
		}
	}
	return &pair{net: net, leader: srv[0], helper: srv[1], servers: party.Servers{Conn: net.Conn("party"), Leader: "leader", Helper: "helper", Dataset: "d"}}
}

// prefixCounts queries every prefix of the release's Count at ε = 2^48.
func (p *pair) prefixCounts(t *testing.T, rel payload.ReleaseID) []uint64 {
	t.Helper()
	all := make([]int, bins)
	for i := range all {
		all[i] = i + 1
	}
	ans, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "leader",
		&protocol.Query{Dataset: "d", Release: rel, Component: payload.Count, Prefixes: all})
	if err != nil {
		t.Fatal(err)
	}
	return ans.Values
}

// TestPreparedVerificationMatchesLocal: with its reports prepared by
// other processes, the leader verifies as reports arrive only those its
// processes prepared, and neither server walks a key to verify those
// both prepared; a release verifies the others too (each server
// preparing them itself), rejects every forgery as a pair preparing
// locally does, and answers with the prefix counts of exactly the
// reports accepted — the folds, less the forgeries and the reports
// folded after the release was agreed, plus those not folded — equal to
// a local pair's over the same scores.
func TestPreparedVerificationMatchesLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	scores := []float64{0.05, 0.2, 0.2, 0.4, 0.55, 0.7, 0.9, 0.99}
	p, preps := newPreparedPair(t)
	local := newVerifiedPair(t, DCF)
	p.uploadVerified(t, scores...)
	local.uploadVerified(t, append(scores, 0.3, 0.8)...)
	ks := forgeries(DCF)
	for _, k := range ks[:4] {
		p.forge(t, k.kind, rng)
	}
	ctx := context.Background()
	if err := p.leader.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, 0, map[string]int{}) // nothing prepared
	preps[0].work(t, 3)
	preps[1].work(t, 5)
	if err := p.leader.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{verify.Reason(verify.ErrProof): 4}
	p.checkVerified(t, len(scores), want)
	for _, srv := range []*Server{p.leader, p.helper} {
		if cpu, _ := srv.KeyWalkCPU(); cpu != 0 {
			t.Errorf("the %s walked keys for %v to verify: its processes prepare them", srv.cfg.Role, cpu)
		}
	}
	p.uploadVerified(t, 0.3) // prepared by neither server's processes
	p.uploadVerified(t, 0.8)
	preps[0].work(t, 1) // … by the leader's only
	rel, n, err := p.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	p.checkVerified(t, len(scores)+2, want)
	if preps[0].now != 0 || preps[1].now != 2 {
		t.Errorf("prepared by the coordinators themselves: leader %d, helper %d reports; want 0 and 2", preps[0].now, preps[1].now)
	}
	preps[0].work(t, 1)
	preps[1].work(t, 1)
	lrel, _, err := local.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	got, wantCounts := p.prefixCounts(t, rel), local.prefixCounts(t, lrel)
	if n != len(scores)+2 || !slices.Equal(got, wantCounts) {
		t.Errorf("release over %d reports, prefix counts %v, want %d and %v (the local pair's)", n, got, len(scores)+2, wantCounts)
	}
	p.uploadVerified(t, 0.6)
	rel2, n2, err := p.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	if total := p.total(t, rel2); n2 != len(scores)+3 || total != len(scores)+3 {
		t.Errorf("second release over %d reports, total %d, want %d", n2, total, len(scores)+3)
	}
	if !slices.Equal(p.prefixCounts(t, rel), got) {
		t.Error("the first release's answers changed as the dataset grew")
	}
}

// TestFoldedUploadCheckedWhenTakenOut is TestFoldedUploadEditedOnPostgres
// (package deploy) in memory: a forgery folded by the role's processes
// and rejected is taken out of the folds by a release, its output
// re-derived from its upload read back. Its upload edited in the store
// after it was folded, both servers refuse the release
// (ErrUploadChanged, naming the dataset, the release and the report)
// instead of subtracting another output; unedited (the control), the
// release counts exactly the honest reports.
func TestFoldedUploadCheckedWhenTakenOut(t *testing.T) {
	for _, edit := range []bool{false, true} {
		t.Run(fmt.Sprintf("edited=%v", edit), func(t *testing.T) {
			p, preps := newPreparedPair(t)
			p.uploadVerified(t, 0.1, 0.5, 0.9)
			p.forge(t, forgeries(DCF)[0].kind, rand.New(rand.NewPCG(7, 8)))
			preps[0].work(t, 4)
			preps[1].work(t, 4)
			if err := p.leader.Verify(t.Context()); err != nil {
				t.Fatal(err)
			}
			var forged core.ID
			for id := range preps[0].folded {
				if _, held := p.leader.datasets["d"].reports[id]; !held {
					forged = id
				}
			}
			if forged.IsZero() || len(preps[0].folded) != 4 || len(preps[1].folded) != 4 {
				t.Fatalf("folded %d and %d reports, the forgery %v among them; want 4 each", len(preps[0].folded), len(preps[1].folded), forged)
			}
			if edit {
				for _, prep := range preps {
					up := mustDecode(prep.reports["d"][forged]).(*protocol.Upload)
					up.Share[len(up.Share)/2] ^= 0x10
					prep.reports["d"][forged] = protocol.Encode(up)
				}
			}
			rel, n, err := p.release(1 << 48)
			if !edit {
				if err != nil || n != 3 || p.total(t, rel) != 3 {
					t.Fatalf("the release, unedited: %d reports, %v; want the 3 honest ones", n, err)
				}
				return
			}
			for _, want := range []string{`dataset "d"`, "release " + rel.String(), forged.String(), "quarantine"} {
				if !errors.Is(err, ErrUploadChanged) || !strings.Contains(err.Error(), want) {
					t.Fatalf("the release while a folded upload was edited: %v; want ErrUploadChanged naming %s", err, want)
				}
			}
		})
	}
}
