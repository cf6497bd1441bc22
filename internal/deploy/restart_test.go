package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/verify"
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
func pendingAt(t *testing.T, m *manifest.Manifest, path string, id payload.ReleaseID) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ds, err := m.ServerDataset()
	if err != nil {
		t.Fatal(err)
	}
	net := transport.NewNetwork()
	key := [verify.KeySize]byte{1} // verifies nothing: it never reaches the helper
	srv, err := server.New(server.Config{Role: server.Leader, Peer: manifest.HelperName, Conn: net.Conn(manifest.LeaderName), Ledger: st, Releases: st, Datasets: []server.Dataset{ds}, VerifyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	net.Register(manifest.LeaderName, srv.Handle)
	// A helper that compares ledgers (both empty) and then fails every
	// request, so that the release stays pending.
	net.Register(manifest.HelperName, func(_ context.Context, _ transport.PeerID, req []byte) []byte {
		if msg, err := protocol.Decode(req); err == nil {
			if c, ok := msg.(*protocol.LedgerCheck); ok {
				return protocol.Encode(&protocol.LedgerCheck{Dataset: c.Dataset})
			}
		}
		return protocol.Encode(&protocol.Error{Text: "helper: down"})
	})
	params, err := m.MechanismParams()
	if err != nil {
		t.Fatal(err)
	}
	req := &protocol.CreateRelease{Dataset: m.Dataset, Release: id, Mechanism: params, Components: []payload.Component{payload.Count}}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), net.Conn("analyst"), manifest.LeaderName, req); !errors.Is(err, server.ErrReleasePending) {
		t.Fatalf("a release the helper never heard of: %v, want %v", err, server.ErrReleasePending)
	}
}

// TestUnverifiedStoreRefused: a leader whose store holds a bare DCF key,
// the upload of a dcf deployment before its reports were verified
// (manifest version 2), refuses to start, saying to start on a new store
// file, rather than count or silently drop what it cannot verify.
func TestUnverifiedStoreRefused(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	listen := d.leader.Addrs()[0].String()
	if err := d.leader.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := d.m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	pt, err := party.New(instances(1, 19)[0], g)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := pt.DCFKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(d.dir, "leader.db"))
	if err != nil {
		t.Fatal(err)
	}
	up := &protocol.Upload{Dataset: d.m.Dataset, Report: pt.ReportID(), Key: key}
	if err := st.PutReport(d.m.Dataset, up.Report, protocol.Encode(up)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := ServerConfig{
		Role: server.Leader, Identity: d.leaderID, Manifest: d.m, Listen: []ma.Multiaddr{ma.StringCast(listen)},
		Store: filepath.Join(d.dir, "leader.db"), Logger: quiet, Transport: fast,
	}
	s, err := StartServer(cfg)
	if err == nil {
		s.Close()
	}
	if !errors.Is(err, ErrUnverifiedStore) || !strings.Contains(err.Error(), "new store file") {
		t.Fatalf("starting on a store of bare DCF keys: %v, want ErrUnverifiedStore saying to start on a new store file", err)
	}
}

// A server that fails to start on a new store (here: its address is
// taken) leaves no store file behind; one that fails on an existing
// store keeps it.
func TestFailedStartLeavesNoNewStore(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	taken := d.helper.Addrs()[0]
	for name, existing := range map[string]bool{"new store": false, "existing store": true} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "helper.db")
			if existing {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := StartServer(ServerConfig{Role: server.Helper, Identity: d.helperID, Manifest: d.m, Listen: []ma.Multiaddr{taken}, Store: path, Logger: quiet, Transport: fast})
			if err == nil {
				t.Fatal("a second helper started on a taken address")
			}
			if _, statErr := os.Stat(path); existing == errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("after the failed start (%v): store file stat %v, want it kept only if it existed", err, statErr)
			}
		})
	}
}

// TestStatusResolvesPendingRelease: a leader whose release was left
// pending (the helper down when it started) completes it at the first
// status once the helper is back, not at its next peer check: both
// servers show the release's ε spent.
func TestStatusResolvesPendingRelease(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	d.submitAll(instances(3, 9))
	at, helperAt := d.leader.Addrs(), d.helper.Addrs()[0].String()
	d.leader.Close()
	d.helper.Close()
	path := filepath.Join(d.dir, "leader.db")
	pendingAt(t, d.m, path, payload.ReleaseID{0x7a})
	var err error
	if d.leader, err = d.startWith(server.Leader, d.m, ServerConfig{Store: path, Listen: at}); err != nil {
		t.Fatal(err)
	}
	d.helper = d.start(server.Helper, helperAt)
	for _, sv := range d.status().Servers {
		if sv.Spent.Epsilon != hugeEpsilon {
			t.Errorf("%s: spent ε=%g in the first status after the helper is back, want the pending release's %g", sv.Role, sv.Spent.Epsilon, float64(hugeEpsilon))
		}
	}
}
