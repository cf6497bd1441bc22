package deploy

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// TestRestartedLeaderCompletesPendingRelease: the leader recorded a
// release as pending and crashed before the helper heard of it (played
// by a leader on its store that cannot reach the helper). Restarted, it
// completes the release when it first reaches the helper: the analyst
// reads it by its ID over every report, and both ledgers hold its one
// charge.
func TestRestartedLeaderCompletesPendingRelease(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	for _, x := range []float64{0.2, 0.5, 0.8} {
		if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: x, Label: 1}); err != nil {
			t.Fatal(err)
		}
	}
	at := d.leader.Addrs()
	d.leader.Close()
	path := filepath.Join(d.dir, "leader.db")
	id := payload.ReleaseID{0x9e}
	pendingAt(t, d.m, path, id)

	var err error
	if d.leader, err = d.startWith(server.Leader, d.m, ServerConfig{Store: path, Listen: at}); err != nil {
		t.Fatal(err)
	}
	// Resolved at start-up, before anyone reads it.
	if spent, _ := d.helper.store.Spent(d.m.Dataset); spent.Epsilon != hugeEpsilon {
		t.Fatalf("the helper spent ε=%g once the leader started, want the pending release's", spent.Epsilon)
	}
	e, err := d.readRelease(id)
	if err != nil {
		t.Fatalf("reading the release the restarted leader completed: %v", err)
	}
	if e.N != 3 {
		t.Errorf("release over %d reports, want 3", e.N)
	}
	leader, _ := d.leader.store.Spent(d.m.Dataset)
	helper, _ := d.helper.store.Spent(d.m.Dataset)
	if leader != helper || leader.Epsilon != hugeEpsilon {
		t.Errorf("the leader spent %+v, the helper %+v; want both one charge of ε=%g", leader, helper, float64(hugeEpsilon))
	}
}

// pendingAt has a leader on the store at path, which cannot reach the
// helper, record release id of the manifest's release as pending.
func pendingAt(t *testing.T, m *Manifest, path string, id payload.ReleaseID) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ds, err := m.serverDataset()
	if err != nil {
		t.Fatal(err)
	}
	net := transport.NewNetwork() // no helper on it
	srv, err := server.New(server.Config{Role: server.Leader, Peer: HelperName, Conn: net.Conn(LeaderName), Ledger: st, Releases: st, Datasets: []server.Dataset{ds}})
	if err != nil {
		t.Fatal(err)
	}
	net.Register(LeaderName, srv.Handle)
	params, err := m.MechanismParams()
	if err != nil {
		t.Fatal(err)
	}
	req := &protocol.CreateRelease{Dataset: m.Dataset, Release: id, Mechanism: params, Components: []payload.Component{payload.Count}}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), net.Conn("analyst"), LeaderName, req); !errors.Is(err, server.ErrReleasePending) {
		t.Fatalf("a release the helper never heard of: %v, want %v", err, server.ErrReleasePending)
	}
}
