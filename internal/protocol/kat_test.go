package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// katMessages is one message of every kind with every field set.
func katMessages() []Message {
	id := func(b byte) payload.ID { return payload.ID{b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, b} }
	params := mechanism.Params{Name: "kary", Bins: 1024, Epsilon: 0.5, Delta: 1e-6, K: 16, Relation: mechanism.AddRemove}
	return []Message{
		&Error{Codes: []errcode.Code{errcode.ReleaseAborted, errcode.NotCharged}, Text: "leader: release refused"},
		&Ack{Duplicate: true},
		&Upload{Dataset: "bank", Report: id(1), Key: []byte{0xde, 0xad, 0xbe, 0xef}},
		&Upload{Dataset: "bank", Report: id(2), Public: []byte{1, 2}, Share: []byte{3, 4, 5}},
		&Upload{Dataset: "bank", Report: id(4), Share: []byte{6, 7}},
		&Prepare{Dataset: "bank", Items: []Item{{Report: id(1), Message: []byte{6, 7}}, {Report: id(2), Verdict: VerdictMismatch}}},
		&Prepared{Items: []Item{{Report: id(1), Verdict: VerdictProof}, {Report: id(2), Verdict: VerdictMissing}}},
		&Decide{Dataset: "bank", Items: []Item{{Report: id(1)}, {Report: id(2), Verdict: VerdictReplay}, {Report: id(3), Message: []byte{8, 9}}}},
		&CreateRelease{Dataset: "bank", Release: id(3), Mechanism: params, Components: []payload.Component{payload.Label, payload.NotLabel},
			Reports: 2, Digest: payload.Digest([]payload.ID{id(1), id(4)}), IDs: []payload.ID{id(1), id(4)}},
		&ReleaseCreated{Reports: 2, NeedIDs: true, Missing: []payload.ID{id(4)}},
		&Query{Dataset: "bank", Release: id(3), Component: payload.Count, Prefixes: []int{2, 3}},
		&Answer{Reports: 7, Values: []uint64{9, ^uint64(0)}, Mechanism: params},
		&Answer{Reports: 7, Field: make([]byte, 2*FieldSize), Mechanism: params},
		&ManifestDigest{Fields: []ManifestField{{Name: "budget", Digest: [32]byte{1, 2}}, {Name: "grid", Digest: [32]byte{31: 0xff}}}},
		&LedgerCheck{Dataset: "bank", Charged: 3, Pending: []payload.ReleaseID{id(5), id(6)}},
		&StatusRequest{Dataset: "bank", Reports: 2, Digest: payload.Digest([]payload.ID{id(1), id(4)}), Compare: true, IDs: []payload.ID{id(1), id(4)}},
		&Status{Dataset: "bank", Counts: true, Compared: true, Both: 1, Missing: []payload.ID{id(4)}, Servers: []ServerState{
			{Role: "leader", Version: "v1.2.3", Reports: 2, Held: 5, OneServer: 1, ComparedAt: 1_800_000_000,
				SpentEpsilon: 1, SpentDelta: 1e-6, TotalEpsilon: 4, TotalDelta: 1e-5,
				Releases: []ReleaseState{{Release: id(3), Mechanism: params, Components: []payload.Component{payload.Label, payload.NotLabel}, Reports: 1, ChargeEpsilon: 0.5, ChargeDelta: 1e-6, Created: 1_799_999_000}},
				Errors:   []string{"level=WARN msg=refused"}, PeerReachable: true, PeerCheckedAt: 1_800_000_030, PeerError: "",
				Rejected: []Rejection{{Reason: "mismatch", Count: 3}, {Reason: "proof", Count: 1}},
				Processes: []ProcessState{{ID: "host-1/4242", Coordinator: true, UploadAddr: "10.0.0.1:7401", Listen: "/ip4/10.0.0.1/tcp/4001", Uploads: 9, Started: 1_799_990_000, Seen: 1_800_000_029},
					{ID: "host-2/17", UploadAddr: "10.0.0.3:7401", Uploads: 4, Started: 1_799_990_001, Seen: 1_800_000_028}}},
			{Role: "helper", Version: "v1.2.3", Reports: 1, PeerError: "helper: unreachable"},
		}},
	}
}

// TestEncodingKnownAnswer pins the wire encoding of every message kind:
// SHA-256 over each encoding, length-prefixed. Servers, parties and
// analysts of one deployment exchange these bytes and servers store
// CreateRelease inside their release records: changing any encoding is a
// breaking change that bumps Version (and this hash).
func TestEncodingKnownAnswer(t *testing.T) {
	const want = "a4c3b13bc756cbe434191f5c5ec4aea1cde27100d69181562db2fe6f73375fe4"
	h := sha256.New()
	for _, m := range katMessages() {
		b := Encode(m)
		h.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(b))))
		h.Write(b)
		back, err := Decode(b)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if again := Encode(back); string(again) != string(b) {
			t.Errorf("%T does not round-trip: %x, then %x", m, b, again)
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("message encodings hash to %s, want %s: the wire format changed (bump protocol.Version, then update this hash)", got, want)
	}
}
