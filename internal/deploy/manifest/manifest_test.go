package manifest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

const bins = 64

// newIdentity is a fresh identity.
func newIdentity(t testing.TB) *Identity {
	t.Helper()
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// testManifest is a valid manifest of a pure, tree-only, replace-one
// dataset (no servers started).
func testManifest(t *testing.T) *Manifest {
	t.Helper()
	m := &Manifest{
		Version: ManifestVersion, Protocol: protocol.Version, Dataset: "test", Backend: string(server.DCF), Upload: UploadDirect,
		Leader:     Endpoint{Public: newIdentity(t).Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/1"}},
		Helper:     Endpoint{Public: newIdentity(t).Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/2"}},
		Analysts:   []string{newIdentity(t).PeerID.String()},
		Grid:       Grid{Scale: "linear", Min: 0, Max: 1, Bins: bins},
		Payload:    PayloadLayout(),
		Mechanism:  Mech{Name: "tree", Epsilon: 1, Neighbours: "replace", Allowed: []string{"tree"}},
		Budget:     Budget{Epsilon: 4},
		MinReports: 1,
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestManifestPolicy: the manifest's mechanism section is the policy
// both servers run (server.Dataset.Policy), under the JSON keys
// neighbours, allowed, max_delta and max_epsilon; a policy the manifest's
// own release does not fit, or an unknown relation, is refused.
func TestManifestPolicy(t *testing.T) {
	m := testManifest(t)
	m.Mechanism = Mech{Name: "cascade", Epsilon: 0.5, Delta: 1e-7, Neighbours: "addremove", Allowed: []string{"cascade", "tree"}, MaxDelta: 1e-6, MaxEpsilon: 2}
	m.Budget.Delta = 1e-5
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"neighbours": "addremove"`, `"allowed": [`, `"max_delta": 0.000001`, `"max_epsilon": 2`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("the manifest file lacks %s:\n%s", key, b)
		}
	}
	read, err := ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := read.ServerDataset()
	if err != nil {
		t.Fatal(err)
	}
	want := server.Policy{Relation: mechanism.AddRemove, Mechanisms: []string{"cascade", "tree"}, MaxDelta: 1e-6, MaxEpsilon: 2}
	if got := ds.Policy; got.Relation != want.Relation || !slices.Equal(got.Mechanisms, want.Mechanisms) || got.MaxDelta != want.MaxDelta || got.MaxEpsilon != want.MaxEpsilon {
		t.Fatalf("the servers' policy %+v, want %+v", got, want)
	}

	for _, c := range []struct {
		name string
		edit func(*Mech)
		want string
	}{
		{"the old relation spelling", func(x *Mech) { x.Neighbours = "replace-one" }, `neighbours "replace-one"`},
		{"no relation", func(x *Mech) { x.Neighbours = "" }, `neighbours ""`},
		{"no allowed mechanisms", func(x *Mech) { x.Allowed = nil }, "no allowed mechanisms"},
		{"a release outside the allowed mechanisms", func(x *Mech) { x.Allowed = []string{"tree"} }, "allows the mechanisms tree"},
		{"a release δ above the maximum", func(x *Mech) { x.MaxDelta = 1e-8 }, "δ ≤ 1e-08"},
		{"a release ε above the maximum", func(x *Mech) { x.MaxEpsilon = 0.25 }, "ε ≤ 0.25"},
		{"an unknown allowed mechanism", func(x *Mech) { x.Allowed = append(x.Allowed, "laplace") }, `unknown mechanism "laplace"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := *read
			bad.Mechanism.Allowed = slices.Clone(read.Mechanism.Allowed)
			c.edit(&bad.Mechanism)
			if err := bad.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestOldManifestRefused: a version 1 manifest (the analyst's requests
// chose the relation) and a version 2 one (unverified dcf reports) are
// refused as ErrManifestVersion (cmd/fedecdf names the command that
// writes a new one).
func TestOldManifestRefused(t *testing.T) {
	var v1 map[string]any
	b, err := json.Marshal(testManifest(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v1); err != nil {
		t.Fatal(err)
	}
	v1["version"] = 1
	mech := v1["mechanism"].(map[string]any)
	mech["relation"] = "replace-one"
	for _, k := range []string{"neighbours", "allowed", "max_delta"} {
		delete(mech, k)
	}
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := writeNewJSON(path, 0o644, v1); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(path); !errors.Is(err, ErrManifestVersion) || !strings.Contains(err.Error(), "version 1 is not supported") {
		t.Fatalf("a version 1 manifest: %v, want %v", err, ErrManifestVersion)
	}
	// Version 2: a dcf deployment's parties uploaded bare DCF keys, which
	// its servers stored; refused, saying to start on new store files.
	v2 := testManifest(t)
	v2.Version = 2
	path = filepath.Join(t.TempDir(), "manifest.json")
	if err := writeNewJSON(path, 0o644, v2); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(path); err == nil || !strings.Contains(err.Error(), "version 2 is not supported") || !strings.Contains(err.Error(), "new store files") {
		t.Fatalf("a version 2 manifest: %v, want a refusal naming new store files", err)
	}
}

// TestManifestRefusesUselessDeployments: a manifest under which no
// release could ever run, or whose servers would share an address, or
// which no analyst (or a server's key as analyst) could use, or whose
// operator is an analyst or a server, is refused with the reason.
func TestManifestRefusesUselessDeployments(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Manifest)
		want string
	}{
		{"release ε above the budget", func(m *Manifest) { m.Mechanism.Epsilon, m.Budget.Epsilon = 5, 4 }, "exceeds the total budget epsilon 4"},
		{"zero budget ε", func(m *Manifest) { m.Budget.Epsilon = 0 }, "budget epsilon 0 is not positive"},
		{"release δ above the budget", func(m *Manifest) {
			m.Mechanism.Name, m.Mechanism.Allowed, m.Mechanism.Delta, m.Mechanism.MaxDelta = "cascade", []string{"cascade"}, 1e-6, 1e-6
		}, "exceeds the total budget delta 0"},
		{"the same address", func(m *Manifest) { m.Helper.Addrs = m.Leader.Addrs }, "leader and helper both at /ip4/127.0.0.1/tcp/1"},
		{"no analyst", func(m *Manifest) { m.Analysts = nil }, "no analysts: nobody could create a release"},
		{"the leader as analyst", func(m *Manifest) { m.Analysts = []string{m.Leader.PeerID} }, "is a server's key: each analyst needs a key of its own"},
		{"the helper as analyst", func(m *Manifest) { m.Analysts = append(m.Analysts, m.Helper.PeerID) }, "is a server's key"},
		// An analyst holding an operator's key would see the counts status
		// withholds from analysts under add/remove.
		{"an analyst as operator", func(m *Manifest) { m.Operators = m.Analysts }, "is a server's or an analyst's key"},
		{"the leader as operator", func(m *Manifest) { m.Operators = []string{m.Leader.PeerID} }, "is a server's or an analyst's key"},
		{"a malformed operator", func(m *Manifest) { m.Operators = []string{"nobody"} }, `operator "nobody"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := testManifest(t)
			c.edit(m)
			if err := m.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestManifestRefusesUndialableAddresses: an address no one can ever
// dial is refused, with the reason and what to write instead; the ones
// a party can dial pass.
func TestManifestRefusesUndialableAddresses(t *testing.T) {
	for _, c := range []struct {
		addr string
		want string // "" for accepted
	}{
		{"/ip4/10.0.0.1/tcp/4001", ""},
		{"/ip6/fd00::1/tcp/4001", ""},
		{"/dns/leader.example.org/tcp/4001", ""},
		{"/dns4/leader.example.org/tcp/4001", ""},
		{"/ip4/0.0.0.0/tcp/4001", "unspecified address 0.0.0.0"},
		{"/ip6/::/tcp/4001", "unspecified address ::"},
		{"/ip4/10.0.0.1", "has no port"},
		{"/ip4/10.0.0.1/tcp/0", "TCP port 0"},
		{"/ip4/10.0.0.1/udp/4001/quic-v1", "a transport this fedecdf does not have"},
		{"/ip4/10.0.0.1/tcp/4001/ws", "goes on after the port (/ws)"},
		{"/unix/tmp/fedecdf.sock", "not an IP address or DNS name"},
		{"10.0.0.1:4001", "is not a multiaddr"},
		{"/ip4/10.0.0.300/tcp/4001", "is not a multiaddr"},
	} {
		t.Run(c.addr, func(t *testing.T) {
			m := testManifest(t)
			m.Leader.Addrs = []string{c.addr}
			err := m.Check()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "leader") || !strings.Contains(err.Error(), "write")):
				t.Errorf("error %v, want one naming the leader, saying %q and what to write", err, c.want)
			}
		})
	}
}

// TestManifestUploadAddr: a server's sealed-upload address is optional
// (a manifest without one encodes exactly as before the field existed,
// so older manifests and their digests are unchanged); one no party
// can dial, or shared by both servers, is refused with what to write.
func TestManifestUploadAddr(t *testing.T) {
	b, err := json.Marshal(testManifest(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "upload_addr") {
		t.Errorf("a manifest without upload addresses encodes the field: %s", b)
	}
	for _, c := range []struct {
		leader, helper string
		want           string // "" for accepted
	}{
		{"10.0.0.1:7401", "", ""},
		{"leader.example.org:7401", "10.0.0.2:7401", ""},
		{"[fd00::1]:7401", "", ""},
		{"10.0.0.1", "", "is not HOST:PORT"},
		{"10.0.0.1:0", "", "is not a TCP port"},
		{"10.0.0.1:http", "", "is not a TCP port"},
		{"0.0.0.0:7401", "", "no address anyone can dial"},
		{":7401", "", "no address anyone can dial"},
		{"10.0.0.1:7401", "10.0.0.1:7401", "upload address of its own"},
	} {
		t.Run(c.leader+" "+c.helper, func(t *testing.T) {
			m := testManifest(t)
			m.Leader.UploadAddr, m.Helper.UploadAddr = c.leader, c.helper
			err := m.Check()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestManifestMoreUploadAddrs: a server run by several processes lists
// their upload addresses, each checked as upload_addr is; one without
// an upload_addr, listed twice, or also the other server's is refused,
// and UploadAddrs lists upload_addr first.
func TestManifestMoreUploadAddrs(t *testing.T) {
	for _, c := range []struct {
		name         string
		leader       string
		more, helper []string
		want         string // "" for accepted
	}{
		{"two processes", "10.0.0.1:7401", []string{"10.0.0.3:7401"}, nil, ""},
		{"three processes", "10.0.0.1:7401", []string{"10.0.0.3:7401", "leader-3.example.org:7401"}, []string{"10.0.0.2:7401"}, ""},
		{"no upload_addr", "", []string{"10.0.0.3:7401"}, nil, "without an upload_addr"},
		{"listed twice", "10.0.0.1:7401", []string{"10.0.0.1:7401"}, nil, "listed twice"},
		{"undialable", "10.0.0.1:7401", []string{"0.0.0.0:7401"}, nil, "no address anyone can dial"},
		{"no port", "10.0.0.1:7401", []string{"10.0.0.3"}, nil, "is not HOST:PORT"},
		{"the helper's", "10.0.0.1:7401", []string{"10.0.0.2:7401"}, []string{"10.0.0.2:7401"}, "upload address of its own"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := testManifest(t)
			m.Leader.UploadAddr, m.Leader.MoreUploadAddrs = c.leader, c.more
			if len(c.helper) > 0 {
				m.Helper.UploadAddr = c.helper[0]
			}
			err := m.Check()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
			if c.leader != "" {
				if got := m.Leader.UploadAddrs(); !slices.Equal(got, append([]string{c.leader}, c.more...)) {
					t.Errorf("UploadAddrs %v", got)
				}
			}
		})
	}
	if got := testManifest(t).Leader.UploadAddrs(); got != nil {
		t.Errorf("UploadAddrs of a server without upload address: %v, want none", got)
	}
}

// TestManifestSentinels: the refusals callers branch on match their
// sentinels.
func TestManifestSentinels(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Manifest)
		want error
	}{
		{"old version", func(m *Manifest) { m.Version = 2 }, ErrManifestVersion},
		{"other protocol", func(m *Manifest) { m.Protocol-- }, ErrManifestVersion},
		{"no analyst", func(m *Manifest) { m.Analysts = nil }, ErrNoAnalysts},
		{"the leader as analyst", func(m *Manifest) { m.Analysts = []string{m.Leader.PeerID} }, ErrSharedKey},
		{"an analyst as operator", func(m *Manifest) { m.Operators = m.Analysts }, ErrSharedKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := testManifest(t)
			c.edit(m)
			if err := m.Check(); !errors.Is(err, c.want) {
				t.Fatalf("Check: %v, want %v", err, c.want)
			}
		})
	}
}
