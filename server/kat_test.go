package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/wire"
)

// TestReleaseRecordKnownAnswer pins the stored release record and the
// noise a restarted server re-derives from it: SHA-256 over the encoded
// record, then every component's noise at every prefix, for each
// mechanism. A server answers an old release from its stored seed; if
// the encoding or the seed → noise derivation changed, an old release
// would get new noise and an analyst could average two draws. Changing
// either is a breaking change: bump releaseRecordVersion (and the store
// format) and update this hash.
func TestReleaseRecordKnownAnswer(t *testing.T) {
	const want = "974025502cb7a15ef50ba5f730867270b143ad66ee455a53e0f4f2fb4430d436"
	h := sha256.New()
	for i, p := range []mechanism.Params{
		{Name: "tree", Bins: 37, Epsilon: 1, Relation: mechanism.ReplaceOne},
		{Name: "kary", Bins: 37, Epsilon: 0.3, K: 5, Relation: mechanism.AddRemove},
		{Name: "cascade", Bins: 37, Epsilon: 2, Delta: 1e-6, Relation: mechanism.ReplaceOne},
		{Name: "gaussian-tree", Bins: 37, Epsilon: 0.7, Delta: 1e-9, Relation: mechanism.AddRemove},
	} {
		rec := &releaseRecord{
			Dataset: "kat", Release: payload.ReleaseID{byte(i), 0xee}, Mechanism: p,
			Components: []payload.Component{payload.Count, payload.Label, payload.NotLabel, payload.Probability},
			Reports:    []payload.ReportID{{1}, {2}, {3}},
			Created:    1_800_000_000 + int64(i),
		}
		for j := range rec.Seed {
			rec.Seed[j] = byte(31*i + j)
		}
		b, err := rec.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
		back, err := parseReleaseRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		componentNoise, err := back.noise()
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, c := range rec.Components {
			for prefix := 1; prefix <= p.Bins; prefix++ {
				h.Write(binary.LittleEndian.AppendUint64(nil, uint64(componentNoise[c].PrefixNoise(prefix))))
			}
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("release records and their noise hash to %s, want %s: a stored release would get other noise (bump releaseRecordVersion and the store format, then update this hash)", got, want)
	}
}

// TestPendingRecordKnownAnswer pins the leader's pending record, which a
// restarted leader loads to complete or abort the release: SHA-256 of
// the encoding of one spec. Changing it is a breaking change: bump
// pendingRecordVersion (and the store format) and update this hash.
func TestPendingRecordKnownAnswer(t *testing.T) {
	const want = "8a5da74592b16929c53b7b7caa0dd70d93cc207392c570fd9f18a9c389fbff04"
	m := &protocol.CreateRelease{Dataset: "kat", Release: payload.ReleaseID{0xee}, Components: []payload.Component{payload.Label, payload.NotLabel},
		Mechanism: mechanism.Params{Name: "cascade", Bins: 37, Epsilon: 2, Delta: 1e-6, Relation: mechanism.AddRemove}, Reports: 3, IDs: []payload.ReportID{{1}}}
	b := marshalPending(m)
	back, err := parsePending(b)
	if err != nil || !isPending(b) || !sameSpec(back, m) || back.Release != m.Release || back.Dataset != m.Dataset || back.Reports != 0 || len(back.IDs) != 0 {
		t.Fatalf("pending record round trip: %+v, %v", back, err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("a pending record hashes to %s, want %s: a restarted leader would not read its pending releases (bump pendingRecordVersion and the store format, then update this hash)", got, want)
	}
}

// TestPendingRecordRefusesMalformed: a stored pending record that is not
// one is refused (protocol.ErrMalformed), never loaded as another spec.
func TestPendingRecordRefusesMalformed(t *testing.T) {
	spec := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{1}, Components: []payload.Component{payload.Count},
		Mechanism: mechanism.Params{Name: "tree", Bins: 8, Epsilon: 1}}
	good := marshalPending(spec)
	withIDs := *spec
	withIDs.IDs, withIDs.Reports = []payload.ReportID{{2}}, 1
	var wrapped wire.Writer
	wrapped.Uint8(pendingRecordVersion)
	wrapped.Blob(protocol.Encode(&protocol.Upload{Dataset: "d", Report: payload.ReportID{2}}))
	for name, b := range map[string][]byte{
		"empty":            nil,
		"another version":  append([]byte{pendingRecordVersion + 1}, good[1:]...),
		"truncated":        good[:len(good)-1],
		"trailing bytes":   append(slices.Clone(good), 0),
		"an upload inside": wrapped.Bytes(),
		"a report set in it": func() []byte {
			var w wire.Writer
			w.Uint8(pendingRecordVersion)
			w.Blob(protocol.Encode(&withIDs))
			return w.Bytes()
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			if m, err := parsePending(b); !errors.Is(err, protocol.ErrMalformed) {
				t.Errorf("parsed %+v, %v; want %v", m, err, protocol.ErrMalformed)
			}
		})
	}
}

// TestOldReleaseRecordReadable: a version 3 record, written by fedecdf
// before records held their creation time (testdata, from commit
// 6e68507), is still read: its time unknown (0), its noise the one that
// version derived from its seed, and it re-encodes to the same bytes.
func TestOldReleaseRecordReadable(t *testing.T) {
	raw, err := os.ReadFile("testdata/release-record-v3.hex")
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := parseReleaseRecord(b)
	if err != nil {
		t.Fatalf("a version 3 record: %v", err)
	}
	if rec.Created != 0 || rec.Release != (payload.ReleaseID{0x03, 0xee}) || rec.Dataset != "old" || len(rec.Reports) != 2 {
		t.Errorf("version 3 record read as %+v, want release 03ee… of dataset old over 2 reports, created at 0 (unknown)", rec)
	}
	componentNoise, err := rec.noise()
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{-1, -7, -17, 10, 3, 9, 0, 18, -7, -11, -25, -19, -9, -13, -9, -9} // printed by the version that wrote it
	for prefix := 1; prefix <= rec.Mechanism.Bins; prefix++ {
		if got := componentNoise[payload.Count].PrefixNoise(prefix); got != want[prefix-1] {
			t.Errorf("prefix %d: noise %d, want %d as when the record was written", prefix, got, want[prefix-1])
		}
	}
	again, err := rec.MarshalBinary()
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("a version 3 record re-encodes to %x (%v), want its own bytes", again, err)
	}
}
