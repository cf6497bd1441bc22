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
)

// TestManifestMismatchRefused: a helper restarted on another manifest
// (another grid) is found out at the leader's first contact, which
// names the part that differs and no other; until the manifests agree
// again, both servers refuse uploads, releases (named by ID, nothing
// recorded or charged at either) and queries, and the helper refuses
// a release asked of it directly. Once the helper runs the leader's
// manifest again, the next release's exchange clears the refusal.
func TestManifestMismatchRefused(t *testing.T) {
	ctx := context.Background()
	p := newPair(t, DCF, 4, 1, nil)
	parties := p.upload(t, 0.2)
	old, _, err := p.release(1)
	if err != nil {
		t.Fatal(err)
	}
	other := maps.Clone(testManifest)
	other["grid"] = [32]byte{0xff}
	p.helper.cfg.Manifest = other
	p.restart(t, nil) // the leader's first contact finds the difference
	mismatch := func(who string, err error) {
		t.Helper()
		if !errors.Is(err, ErrManifestMismatch) || !strings.Contains(err.Error(), "grid differ") || strings.Contains(err.Error(), "budget") {
			t.Errorf("%s: %v, want %v naming grid only", who, err, ErrManifestMismatch)
		}
	}
	mismatch("the leader's check", p.leader.CheckPeer(ctx))
	mismatch("the helper's record", p.helper.ManifestMismatch())
	q := newParty(t, 0.4)
	leaderKey, helperKey, _ := q.DCFKeys(nil)
	for to, key := range map[transport.PeerID][]byte{"leader": leaderKey, "helper": helperKey} {
		_, err := protocol.Call[*protocol.Ack](ctx, p.servers.Conn, to, &protocol.Upload{Dataset: "d", Report: q.ReportID(), Key: key})
		mismatch("an upload to the "+string(to), err)
	}
	id, _, err := p.release(1)
	mismatch("a release", err)
	if !strings.Contains(err.Error(), id.String()) || !strings.Contains(err.Error(), "nothing recorded or charged") {
		t.Errorf("the refused release's error does not name it as refused: %v", err)
	}
	m := &protocol.CreateRelease{Dataset: "d", Release: id, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
	_, err = p.askHelper(m)
	mismatch("a release asked of the helper", err)
	_, err = protocol.Call[*protocol.Answer](ctx, p.net.Conn("analyst"), "leader", &protocol.Query{Dataset: "d", Release: old, Component: payload.Count, Prefixes: []int{1}})
	mismatch("a query", err)
	for _, s := range []*Server{p.leader, p.helper} {
		if spent, _ := s.cfg.Ledger.Spent("d"); spent.Epsilon != 1 || len(s.datasets["d"].pending) != 0 {
			t.Errorf("%s spent ε=%g with %d pending, want the first release's 1 and none", s.cfg.Role, spent.Epsilon, len(s.datasets["d"].pending))
		}
	}

	p.helper.cfg.Manifest = testManifest
	p.restart(t, parties)
	if _, _, err := p.release(1); err != nil {
		t.Fatalf("a release once both run the same manifest: %v", err)
	}
	p.noisyPrefixes(t, old)
}

// TestHelperWaitsForTheLeadersManifest: a helper refuses a release until
// the leader has shown matching manifest digests (a leader that never
// does, e.g. of another version, cannot create releases).
func TestHelperWaitsForTheLeadersManifest(t *testing.T) {
	ds := []Dataset{{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 1}, MinReports: 1}}
	helper, err := New(Config{Role: Helper, Peer: "leader", Ledger: ledger.NewMemory(), Datasets: ds, Manifest: testManifest})
	if err != nil {
		t.Fatal(err)
	}
	net := transport.NewNetwork()
	net.Register("helper", helper.Handle)
	m := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{1}, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), net.Conn("leader"), "helper", m); !errors.Is(err, ErrManifestMismatch) {
		t.Fatalf("a release before the leader's digests: %v, want %v", err, ErrManifestMismatch)
	}
	resp, err := protocol.Call[*protocol.ManifestDigest](context.Background(), net.Conn("leader"), "helper", &protocol.ManifestDigest{Fields: manifestFields(testManifest)})
	if err != nil || !slices.Equal(resp.Fields, manifestFields(testManifest)) {
		t.Fatalf("the helper's digests: %+v, %v", resp, err)
	}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), net.Conn("leader"), "helper", m); errors.Is(err, ErrManifestMismatch) {
		t.Fatalf("a release after the leader's digests: %v", err)
	}
	if _, err := protocol.Call[*protocol.ManifestDigest](context.Background(), net.Conn("stranger"), "helper", &protocol.ManifestDigest{Fields: manifestFields(testManifest)}); !errors.Is(err, ErrNotLeader) {
		t.Errorf("digests from a stranger: %v, want %v", err, ErrNotLeader)
	}
}

// TestDiffFields names the parts that differ or that one side lacks.
func TestDiffFields(t *testing.T) {
	f := func(name string, b byte) protocol.ManifestField {
		return protocol.ManifestField{Name: name, Digest: [32]byte{b}}
	}
	for _, c := range []struct {
		name string
		a, b []protocol.ManifestField
		want []string
	}{
		{"equal", []protocol.ManifestField{f("grid", 1), f("budget", 2)}, []protocol.ManifestField{f("budget", 2), f("grid", 1)}, nil},
		{"one differs", []protocol.ManifestField{f("grid", 1), f("budget", 2)}, []protocol.ManifestField{f("grid", 1), f("budget", 3)}, []string{"budget"}},
		{"one side lacks one", []protocol.ManifestField{f("grid", 1), f("policy", 2)}, []protocol.ManifestField{f("grid", 1), f("budget", 2)}, []string{"budget", "policy"}},
		{"no digests at all", nil, []protocol.ManifestField{f("grid", 1)}, []string{"grid"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := diffFields(c.a, c.b); !slices.Equal(got, c.want) {
				t.Errorf("diffFields = %v, want %v", got, c.want)
			}
		})
	}
}
