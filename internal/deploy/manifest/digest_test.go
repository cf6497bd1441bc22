package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

// katManifest is a fixed manifest (fixed peer IDs, no keys needed).
func katManifest() *Manifest {
	return &Manifest{
		Version: 2, Protocol: 4, Dataset: "kat", Backend: string(server.DCF), Upload: UploadDirect,
		Leader:     Endpoint{Public: Public{PeerID: "12D3KooWLeader"}, Addrs: []string{"/ip4/10.0.0.1/tcp/4001"}},
		Helper:     Endpoint{Public: Public{PeerID: "12D3KooWHelper", HPKESuite: "kat", HPKEPublicKey: []byte{1, 2, 3}}, Addrs: []string{"/ip4/10.0.0.2/tcp/4002"}},
		Analysts:   []string{"12D3KooWAnalyst"},
		Grid:       Grid{Scale: "linear", Min: 0, Max: 1, Bins: 256},
		Payload:    PayloadLayout(),
		Mechanism:  Mech{Name: "tree", Epsilon: 1, Neighbours: "replace", Allowed: []string{"tree"}, MaxDelta: 0, MaxEpsilon: 2},
		Budget:     Budget{Epsilon: 4, Delta: 1e-6},
		MinReports: 100,
	}
}

// TestManifestDigestKnownAnswer pins the manifest digests the servers
// exchange: SHA-256 over every part's name and digest. Two servers of
// different fedecdf versions compare these bytes; changing the parts or
// their encoding bumps manifestDigestVersion (and protocol.Version) and
// updates this hash.
func TestManifestDigestKnownAnswer(t *testing.T) {
	const want = "e15372a50c40656049b829ba1f6c08e1de953fc25e1ceb99080bf96130d96081"
	h := sha256.New()
	for _, f := range katManifest().Digests() {
		h.Write([]byte(f.Name))
		h.Write(f.Digest[:])
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("manifest digests hash to %s, want %s: servers of this and the previous version would refuse each other's manifest (bump manifestDigestVersion, then update this hash)", got, want)
	}
}

// TestManifestDigestUploadsKnownAnswer pins the uploads digest of a
// manifest with one upload address per server, which must equal that of
// fedecdf before more_upload_addrs existed (so an old manifest keeps its
// digests), and of one listing two addresses for the leader, which must
// differ from every one-address manifest's.
func TestManifestDigestUploadsKnownAnswer(t *testing.T) {
	for _, c := range []struct {
		name string
		more []string
		want string
	}{
		{"one address each", nil, "dd2769383af15c423aa76e472d758ffb8904dd7e0fba12ca6819a8b39b38aefc"},
		{"two leader addresses", []string{"10.0.0.3:7401"}, "ecf8e7d8c3de5ac946fee1b19b515c08c7e3fedd610ca404235ac68688e101d0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := katManifest()
			m.Leader.UploadAddr, m.Leader.MoreUploadAddrs, m.Helper.UploadAddr = "10.0.0.1:7401", c.more, "10.0.0.2:7402"
			d := DigestsByName(m.Digests())["uploads"]
			if got := hex.EncodeToString(d[:]); got != c.want {
				t.Errorf("uploads digest %s, want %s", got, c.want)
			}
		})
	}
}

// TestDigestsNameWhatDiffers: each change to a manifest changes the
// digest of exactly the part it belongs to, and none for what the
// servers do not act on (libp2p addresses, the analysts' release).
func TestDigestsNameWhatDiffers(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(m *Manifest)
		want []string
	}{
		{"bins", func(m *Manifest) { m.Grid.Bins = 128 }, []string{"grid"}},
		{"grid scale", func(m *Manifest) { m.Grid.Scale = "log" }, []string{"grid"}},
		{"budget ε", func(m *Manifest) { m.Budget.Epsilon = 8 }, []string{"budget"}},
		{"budget δ", func(m *Manifest) { m.Budget.Delta = 0 }, []string{"budget"}},
		{"neighbours", func(m *Manifest) { m.Mechanism.Neighbours = "addremove" }, []string{"policy"}},
		{"allowed", func(m *Manifest) { m.Mechanism.Allowed = []string{"tree", "kary"} }, []string{"policy"}},
		{"max δ", func(m *Manifest) { m.Mechanism.MaxDelta = 1e-9 }, []string{"policy"}},
		{"max ε", func(m *Manifest) { m.Mechanism.MaxEpsilon = 0 }, []string{"policy"}},
		{"dataset", func(m *Manifest) { m.Dataset = "other" }, []string{"dataset"}},
		{"upload", func(m *Manifest) { m.Upload = UploadRelay }, []string{"dataset"}},
		{"min reports", func(m *Manifest) { m.MinReports = 10 }, []string{"min_reports"}},
		{"helper key", func(m *Manifest) { m.Helper.PeerID = "12D3KooWOther" }, []string{"servers"}},
		{"helper HPKE key", func(m *Manifest) { m.Helper.HPKEPublicKey = []byte{9} }, []string{"servers"}},
		{"analysts", func(m *Manifest) { m.Analysts = append(m.Analysts, "12D3KooWSecond") }, []string{"analysts"}},
		{"operators", func(m *Manifest) { m.Operators = append(m.Operators, "12D3KooWOperator") }, []string{"operators"}},
		{"protocol", func(m *Manifest) { m.Protocol = 3 }, []string{"version"}},
		{"the helper's address", func(m *Manifest) { m.Helper.Addrs = []string{"/ip4/10.0.0.9/tcp/4002"} }, nil},
		{"the upload addresses", func(m *Manifest) {
			m.Leader.UploadAddr, m.Helper.UploadAddr = "10.0.0.1:7401", "10.0.0.2:7402"
		}, []string{"uploads"}},
		{"the helper's upload address", func(m *Manifest) { m.Helper.UploadAddr = "10.0.0.2:7402" }, []string{"uploads"}},
		{"a second upload address", func(m *Manifest) {
			m.Leader.UploadAddr, m.Leader.MoreUploadAddrs = "10.0.0.1:7401", []string{"10.0.0.3:7401"}
		}, []string{"uploads"}},
		{"the analysts' ε", func(m *Manifest) { m.Mechanism.Epsilon = 0.5 }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := katManifest(), katManifest()
			c.edit(b)
			var got []string
			for i, f := range a.Digests() {
				if g := b.Digests()[i]; g.Name != f.Name {
					t.Fatalf("part %d is %s in one manifest, %s in the other", i, f.Name, g.Name)
				} else if g.Digest != f.Digest {
					got = append(got, f.Name)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("changed parts %v, want %v", got, c.want)
			}
		})
	}
	if n := len(katManifest().Digests()); n > protocol.MaxFields {
		t.Errorf("%d parts exceed the %d a ManifestDigest carries", n, protocol.MaxFields)
	}
}
