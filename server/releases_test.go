package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
)

// restart replaces both servers by fresh ones over the same ledgers and
// release stores (a crash and restart), and re-uploads the parties'
// reports as the deployment's report store replays them.
func (p *pair) restart(t *testing.T, parties []*party.Party) {
	t.Helper()
	net := transport.NewNetwork()
	for _, s := range []**Server{&p.leader, &p.helper} {
		cfg := (*s).cfg
		if cfg.Role == Leader {
			cfg.Conn = net.Conn("leader")
		}
		var err error
		if *s, err = New(cfg); err != nil {
			t.Fatal(err)
		}
	}
	net.Register("leader", p.leader.Handle)
	net.Register("helper", p.helper.Handle)
	// First contact, as at start-up (a mismatch of manifests or ledgers is
	// the caller's to test).
	if err := p.leader.CheckPeer(context.Background()); err != nil && !errors.Is(err, ErrManifestMismatch) && !errors.Is(err, ErrLedgerRewound) {
		t.Fatal(err)
	}
	p.net = net
	p.servers.Conn = net.Conn("party")
	for _, pt := range parties {
		if err := pt.UploadKeys(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
	}
}

// noisyPrefixes queries every prefix of release rel.
func (p *pair) noisyPrefixes(t *testing.T, rel payload.ReleaseID) []uint64 {
	t.Helper()
	prefixes := make([]int, bins)
	for i := range prefixes {
		prefixes[i] = i + 1
	}
	msg := &protocol.Query{Dataset: "d", Release: rel, Component: payload.Count, Prefixes: prefixes}
	ans, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "leader", msg)
	if err != nil {
		t.Fatal(err)
	}
	return ans.Values
}

// TestReleaseSurvivesRestart: a release queried before and after both
// servers restart from their stores gives the identical noisy answer,
// is not charged twice, and cannot be created again; a server restarted
// without its release store no longer knows the release.
func TestReleaseSurvivesRestart(t *testing.T) {
	p := newPair(t, DCF, 2, 3, nil)
	var parties []*party.Party
	for _, x := range []float64{0.1, 0.5, 0.9} {
		pt := newParty(t, x)
		if err := pt.UploadKeys(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
		parties = append(parties, pt)
	}
	rel, _, err := p.release(1)
	if err != nil {
		t.Fatal(err)
	}
	before := p.noisyPrefixes(t, rel)
	other, _, err := p.release(1)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(p.noisyPrefixes(t, other), before) {
		t.Fatal("two releases at ε = 1 gave the same answer: the noise does not depend on the seed")
	}

	p.restart(t, parties)
	if after := p.noisyPrefixes(t, rel); !slices.Equal(after, before) {
		t.Fatalf("after a restart release %v answers\n%v\nwant the same noise as before\n%v", rel, after, before)
	}
	for _, s := range []*Server{p.leader, p.helper} {
		if spent, _ := s.cfg.Ledger.Spent("d"); spent.Epsilon != 2 {
			t.Errorf("%s spent ε=%g after the restart, want 2", s.cfg.Role, spent.Epsilon)
		}
	}
	msg := &protocol.CreateRelease{Dataset: "d", Release: rel, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 0.5}, Components: []payload.Component{payload.Count}}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", msg); !errors.Is(err, ErrReleaseExists) {
		t.Fatalf("re-creating a restored release with another ε: %v", err)
	}

	p.leader.cfg.Releases = newMemoryReleases()
	p.restart(t, parties)
	q := &protocol.Query{Dataset: "d", Release: rel, Component: payload.Count, Prefixes: []int{1}}
	if _, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "leader", q); !errors.Is(err, ErrUnknownRelease) {
		t.Fatalf("query of a release the leader's store lost: %v", err)
	}
}

// failingReleases refuses every save, like a full disk.
type failingReleases struct{ memoryReleases }

func (*failingReleases) SaveRelease(string, payload.ReleaseID, []byte) error { return errFull }

var errFull = errors.New("no space left on device")

// TestUnsavedReleaseNotAcknowledged: a release the store cannot record is
// refused and unknown to later queries.
func TestUnsavedReleaseNotAcknowledged(t *testing.T) {
	p := newPair(t, DCF, 2, 1, nil)
	p.helper.cfg.Releases = &failingReleases{}
	if err := newParty(t, 0.3).UploadKeys(context.Background(), p.servers); err != nil {
		t.Fatal(err)
	}
	rel, _, err := p.release(1)
	if err == nil || !strings.Contains(err.Error(), errFull.Error()) || !strings.Contains(err.Error(), "not recorded") {
		t.Fatalf("release with a failing store: %v", err)
	}
	q := &protocol.Query{Dataset: "d", Release: rel, Component: payload.Count, Prefixes: []int{1}}
	if _, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "helper", q); err == nil {
		t.Fatal("the helper answered a release it did not record")
	}
}

func testRecord(t testing.TB) *releaseRecord {
	seed, err := noise.NewSeed()
	if err != nil {
		t.Fatal(err)
	}
	ids := []payload.ReportID{{1}, {2}, {9}}
	return &releaseRecord{
		Dataset: "d", Release: payload.ReleaseID{7}, Seed: seed, Reports: ids,
		Mechanism:  mechanism.Params{Name: "kary", Bins: 100, Epsilon: 0.5, K: 4, Relation: mechanism.AddRemove},
		Components: []payload.Component{payload.Count, payload.Label},
		Created:    1_800_000_000,
	}
}

func TestReleaseRecordRoundTrip(t *testing.T) {
	want := testRecord(t)
	b, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseReleaseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dataset != want.Dataset || got.Release != want.Release || got.Seed != want.Seed || got.Mechanism != want.Mechanism || got.Created != want.Created ||
		!slices.Equal(got.Components, want.Components) || !slices.Equal(got.Reports, want.Reports) {
		t.Fatalf("round trip: got %+v, want %+v", got, want)
	}
	for _, bad := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", b[:len(b)-1], "release record"},
		{"old version", append([]byte{1}, b[1:]...), "version 1 is not supported"},
		{"next version", append([]byte{releaseRecordVersion + 1}, b[1:]...), "is not supported"},
		{"no creation time", slices.Concat(b[:1+len(want.Seed)], make([]byte, 8), b[1+len(want.Seed)+8:]), "creation time 0"},
		{"negative creation time", slices.Concat(b[:1+len(want.Seed)], bytes.Repeat([]byte{0xff}, 8), b[1+len(want.Seed)+8:]), "creation time -1"},
		{"trailing", append(slices.Clone(b), 0), "release record"},
		{"empty", nil, "release record"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if _, err := parseReleaseRecord(bad.b); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%v, want %q with %q", err, protocol.ErrMalformed, bad.want)
			}
		})
	}
	unsorted := testRecord(t)
	unsorted.Reports = []payload.ReportID{{9}, {1}}
	b, err = unsorted.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseReleaseRecord(b); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("record with unsorted reports: %v", err)
	}
}

// FuzzParseReleaseRecord: no input panics, and what parses re-encodes to
// itself.
func FuzzParseReleaseRecord(f *testing.F) {
	b, err := testRecord(f).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:40])
	f.Add([]byte{1})
	if old, err := os.ReadFile("testdata/release-record-v3.hex"); err == nil {
		if b, err := hex.DecodeString(strings.TrimSpace(string(old))); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseReleaseRecord(b)
		if err != nil {
			return
		}
		again, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("record re-encodes differently:\n%x\n%x", again, b)
		}
	})
}

// TestLoadRecordChecksWhereItWasSaved: a record loaded under another
// release ID or dataset than its own is refused (a store that mixed up
// its keys must not restore one release's noise for another).
func TestLoadRecordChecksWhereItWasSaved(t *testing.T) {
	rec := testRecord(t)
	b, err := rec.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		dataset string
		release payload.ReleaseID
		ok      bool
	}{
		{"its own", rec.Dataset, rec.Release, true},
		{"another release", rec.Dataset, payload.ReleaseID{8}, false},
		{"another dataset", "e", rec.Release, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := loadRecord(c.dataset, c.release, b); (err == nil) != c.ok {
				t.Errorf("loadRecord: %v, want ok %v", err, c.ok)
			}
		})
	}
}
