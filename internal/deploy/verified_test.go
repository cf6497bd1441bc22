package deploy

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"encoding/hex"
	"errors"
	"maps"
	"path/filepath"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/server"
)

// newAdditiveDeployment starts a deployment of the additive backend
// whose parties upload in mode, at ε = 2^48, needing n reports.
func newAdditiveDeployment(t *testing.T, n int, mode string) *deployment {
	t.Helper()
	return newBackendDeployment(t, string(server.Additive), n, mode)
}

// newBackendDeployment starts a deployment of backend whose parties
// upload in mode, at ε = 2^48, needing n reports.
func newBackendDeployment(t *testing.T, backend string, n int, mode string) *deployment {
	t.Helper()
	d := newDeploymentTweaked(t, hugeEpsilon, n, mode, "replace", func(c *ServerConfig) {
		c.Manifest.Backend = backend
	})
	d.m.Backend = backend
	return d
}

// verifiedBackends are the deployments' backends: both verify reports.
var verifiedBackends = []string{string(server.Additive), string(server.DCF)}

// forgeryKinds returns the forgeries of d's backend.
func (d *deployment) forgeryKinds() []client.ForgeryKind {
	d.t.Helper()
	kinds, err := client.ForgeriesOf(d.m)
	if err != nil {
		d.t.Fatal(err)
	}
	return kinds
}

// forgeryReasons is what both servers count for one forgery of each kind
// of d's backend.
func (d *deployment) forgeryReasons() map[string]int {
	want := map[string]int{}
	for _, k := range d.forgeryKinds() {
		want[k.Reason]++
	}
	return want
}

// checkRejected checks that both servers rejected want, per reason,
// and that fedecdf status shows it for both.
func (d *deployment) checkRejected(want map[string]int) {
	d.t.Helper()
	for _, s := range []*Server{d.leader, d.helper} {
		got, err := s.srv.Rejected(d.m.Dataset)
		if err != nil {
			d.t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			d.t.Errorf("the %s rejected %v, want %v", s.cfg.Role, got, want)
		}
	}
	st := d.status()
	for _, sv := range st.Servers {
		if !maps.Equal(sv.Rejected, want) {
			d.t.Errorf("status: the %s rejected %v, want %v", sv.Role, sv.Rejected, want)
		}
	}
}

// TestVerifiedOverTheNetwork: for both backends, honest parties upload
// verified reports over libp2p, directly and through the leader, and one
// malicious party of every kind of forgery an invalid one; both servers
// reject every forgery, each for its reason (fedecdf status shows the
// counts), and the release at ε = 2^48 counts exactly the honest parties
// (for dcf, the probability forgeries included).
func TestVerifiedOverTheNetwork(t *testing.T) {
	const n = 24
	for _, backend := range verifiedBackends {
		for _, mode := range []string{manifest.UploadDirect, manifest.UploadRelay} {
			t.Run(backend+"/"+mode, func(t *testing.T) {
				d := newBackendDeployment(t, backend, n, mode)
				inst := instances(n, 5)
				if _, err := client.SubmitAll(context.Background(), d.m, inst, fast, 8, false); err != nil {
					t.Fatal(err)
				}
				if err := client.SubmitForgeries(context.Background(), d.m, len(d.forgeryKinds()), fast, 1); err != nil {
					t.Fatal(err)
				}
				checkExact(t, d.query(), plainCounts(t, d.m, inst))
				d.checkRejected(d.forgeryReasons())
			})
		}
	}
}

// TestVerifiedSurvivesRestart: for both backends, after both servers
// restart on their stores, they count the same verified reports and
// rejections, read the old release with its noise and release the same
// counts anew; reports uploaded before the restart and never verified
// are verified after it, and the rejected ones' uploads leave the store.
func TestVerifiedSurvivesRestart(t *testing.T) {
	for _, backend := range verifiedBackends {
		t.Run(backend, func(t *testing.T) { survivesRestart(t, backend) })
	}
}

func survivesRestart(t *testing.T, backend string) {
	const n = 12
	d := newBackendDeployment(t, backend, n, manifest.UploadDirect)
	inst := instances(n, 6)
	if _, err := client.SubmitAll(context.Background(), d.m, inst[:n/2], fast, 4, false); err != nil {
		t.Fatal(err)
	}
	if err := client.SubmitForgeries(context.Background(), d.m, len(d.forgeryKinds()), fast, 2); err != nil {
		t.Fatal(err)
	}
	if err := d.leader.srv.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SubmitAll(context.Background(), d.m, inst[n/2:], fast, 4, false); err != nil {
		t.Fatal(err)
	}
	d.restartBoth()
	for _, s := range []*Server{d.leader, d.helper} { // the forgeries' uploads are deleted, their verdicts kept
		if got, err := s.NumReports(); got != n || err != nil {
			t.Errorf("the %s's store holds %d uploads after a restart (%v), want the %d honest ones", s.cfg.Role, got, err, n)
		}
	}
	first := d.query()
	want := plainCounts(t, d.m, inst)
	checkExact(t, first, want)
	d.checkRejected(d.forgeryReasons())
	d.restartBoth()
	d.checkRejected(d.forgeryReasons())
	checkExact(t, d.query(), want)
	id, err := analyst.ParseReleaseID(first.Release)
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.readRelease(id)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, again, want)
}

// TestVerifyKeyKnownAnswer pins the derivation of the servers' verify
// key from fixed X25519 keys: both servers derive the same key, a key
// changed by a new derivation would make a restarted server refuse its
// store (store.ErrVerifyKeyChanged). An analyst's key, with the same
// public keys at hand, derives another key: only the two servers can.
func TestVerifyKeyKnownAnswer(t *testing.T) {
	const want = "f03fae1cde397e8be894358b6e39796f85014db0a6b99e529b4022d2ae5ca369"
	ids := map[string]*manifest.Identity{}
	pub := map[string][]byte{}
	for i, name := range []string{"leader", "helper", "analyst"} {
		sk, err := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{byte(i + 1)}, 32))
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = &manifest.Identity{HPKEPrivate: sk.Bytes()}
		pub[name] = sk.PublicKey().Bytes()
	}
	m := &manifest.Manifest{Dataset: "kat",
		Leader: manifest.Endpoint{Public: manifest.Public{PeerID: "leader-id", HPKEPublicKey: pub["leader"]}},
		Helper: manifest.Endpoint{Public: manifest.Public{PeerID: "helper-id", HPKEPublicKey: pub["helper"]}}}
	l, err := sharedVerifyKey(m, server.Leader, ids["leader"])
	if err != nil {
		t.Fatal(err)
	}
	h, err := sharedVerifyKey(m, server.Helper, ids["helper"])
	if err != nil {
		t.Fatal(err)
	}
	if l != h {
		t.Fatalf("the leader derives %x, the helper %x", l, h)
	}
	if got := hex.EncodeToString(l[:]); got != want {
		t.Errorf("verify key %s, want %s", got, want)
	}
	for _, role := range []server.Role{server.Leader, server.Helper} {
		if k, err := sharedVerifyKey(m, role, ids["analyst"]); err != nil || k == l {
			t.Errorf("the analyst as the %s derives %x (%v): the servers' key", role, k, err)
		}
	}
	m.Dataset = "another"
	if k, _ := sharedVerifyKey(m, server.Leader, ids["leader"]); k == l {
		t.Error("another dataset has the same verify key")
	}
}

// TestVerifyKeyPerDeployment: the verify key binds the manifest: a
// change to any field the servers verify or release under — version,
// protocol, dataset, backend, upload, payload, each grid field, each
// policy field, the minimum reports, either server's identity — derives
// another key at both servers, while the budget, the analysts and the
// operators (changeable on the same store) and the servers' addresses
// keep it.
func TestVerifyKeyPerDeployment(t *testing.T) {
	ids := map[string]*manifest.Identity{}
	pub := map[string][]byte{}
	for i, name := range []string{"leader", "helper"} {
		sk, err := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{byte(i + 1)}, 32))
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = &manifest.Identity{HPKEPrivate: sk.Bytes()}
		pub[name] = sk.PublicKey().Bytes()
	}
	base := func() *manifest.Manifest {
		return &manifest.Manifest{Version: 3, Protocol: 9, Dataset: "d", Backend: "dcf", Upload: manifest.UploadDirect,
			Leader:   manifest.Endpoint{Public: manifest.Public{PeerID: "leader-id", HPKESuite: "s", HPKEPublicKey: pub["leader"]}, Addrs: []string{"/ip4/1.2.3.4/tcp/1"}},
			Helper:   manifest.Endpoint{Public: manifest.Public{PeerID: "helper-id", HPKESuite: "s", HPKEPublicKey: pub["helper"]}, Addrs: []string{"/ip4/1.2.3.5/tcp/1"}},
			Analysts: []string{"a"}, Operators: []string{"o"},
			Grid: manifest.Grid{Scale: "linear", Min: 0, Max: 1, Bins: 64}, Payload: []string{"count", "label"},
			Mechanism: manifest.Mech{Name: "tree", Epsilon: 1, Neighbours: "replace", Allowed: []string{"tree"}, MaxDelta: 0, MaxEpsilon: 2},
			Budget:    manifest.Budget{Epsilon: 4}, MinReports: 10}
	}
	keys := func(m *manifest.Manifest) [verify.KeySize]byte {
		t.Helper()
		l, err := sharedVerifyKey(m, server.Leader, ids["leader"])
		if err != nil {
			t.Fatal(err)
		}
		h, err := sharedVerifyKey(m, server.Helper, ids["helper"])
		if err != nil || h != l {
			t.Fatalf("the leader derives %x, the helper %x (%v)", l, h, err)
		}
		return l
	}
	orig := keys(base())
	for _, c := range []struct {
		field string
		edit  func(m *manifest.Manifest)
		same  bool
	}{
		{"version", func(m *manifest.Manifest) { m.Version++ }, false},
		{"protocol", func(m *manifest.Manifest) { m.Protocol++ }, false},
		{"dataset", func(m *manifest.Manifest) { m.Dataset = "e" }, false},
		{"backend", func(m *manifest.Manifest) { m.Backend = "additive" }, false},
		{"upload", func(m *manifest.Manifest) { m.Upload = manifest.UploadRelay }, false},
		{"payload", func(m *manifest.Manifest) { m.Payload = append(m.Payload, "probability") }, false},
		{"grid scale", func(m *manifest.Manifest) { m.Grid.Scale = "log" }, false},
		{"grid min", func(m *manifest.Manifest) { m.Grid.Min = -1 }, false},
		{"grid max", func(m *manifest.Manifest) { m.Grid.Max = 2 }, false},
		{"grid bins", func(m *manifest.Manifest) { m.Grid.Bins = 128 }, false},
		{"neighbours", func(m *manifest.Manifest) { m.Mechanism.Neighbours = "addremove" }, true},
		{"allowed", func(m *manifest.Manifest) { m.Mechanism.Allowed = []string{"tree", "cascade"} }, true},
		{"max delta", func(m *manifest.Manifest) { m.Mechanism.MaxDelta = 1e-9 }, true},
		{"max epsilon", func(m *manifest.Manifest) { m.Mechanism.MaxEpsilon = 3 }, true},
		{"min reports", func(m *manifest.Manifest) { m.MinReports = 11 }, false},
		{"leader peer ID", func(m *manifest.Manifest) { m.Leader.PeerID = "other" }, false},
		{"helper peer ID", func(m *manifest.Manifest) { m.Helper.PeerID = "other" }, false},
		{"HPKE suite", func(m *manifest.Manifest) { m.Helper.HPKESuite = "t" }, false},
		{"budget", func(m *manifest.Manifest) { m.Budget.Epsilon = 5 }, true},
		{"analysts", func(m *manifest.Manifest) { m.Analysts = append(m.Analysts, "b") }, true},
		{"operators", func(m *manifest.Manifest) { m.Operators = nil }, true},
		{"addresses", func(m *manifest.Manifest) {
			m.Leader.Addrs = []string{"/ip4/9.9.9.9/tcp/1"}
			m.Helper.UploadAddr = "h:1"
		}, true},
		{"release asked for", func(m *manifest.Manifest) { m.Mechanism.Epsilon, m.Mechanism.Name = 2, "cascade" }, true},
	} {
		t.Run(c.field, func(t *testing.T) {
			m := base()
			c.edit(m)
			if got := keys(m); (got == orig) != c.same {
				t.Errorf("key unchanged: %v, want %v", got == orig, c.same)
			}
		})
	}
}

// TestChangedVerifyKeyRefused: a store keeps the first verify key, and
// a server whose store holds verdicts reached under another verify key
// (a key file changed) refuses to start, saying so.
func TestChangedVerifyKeyRefused(t *testing.T) {
	d := newAdditiveDeployment(t, 1, manifest.UploadDirect)
	d.submitAll(instances(3, 5))
	d.query() // the reports are verified: the stores hold verdicts
	d.helper.Close()
	st, err := store.Open(d.helper.cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	err = st.CheckVerifyKey(d.m.Dataset, bytes.Repeat([]byte{1}, verify.KeySize))
	st.Close()
	if !errors.Is(err, store.ErrVerifyKeyChanged) {
		t.Fatalf("another key over the helper's store: %v", err)
	}
	other := filepath.Join(d.dir, "other.db")
	if st, err = store.Open(other); err != nil {
		t.Fatal(err)
	}
	err = st.CheckVerifyKey(d.m.Dataset, bytes.Repeat([]byte{1}, verify.KeySize))
	if err == nil {
		err = st.SaveVerdicts(d.m.Dataset, map[payload.ReportID][]byte{{1}: {1}})
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.startWith(server.Helper, d.m, ServerConfig{Store: other})
	if !errors.Is(err, store.ErrVerifyKeyChanged) {
		t.Errorf("the helper started over a store of another key: %v", err)
	}
}
