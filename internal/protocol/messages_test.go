package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/wire"
)

func sampleMessages() []Message {
	id := payload.ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	return []Message{
		&Error{Text: "budget exhausted"},
		&Ack{Duplicate: true},
		&Upload{Dataset: "d", Report: id, Key: []byte{1, 2, 3}},
		&Upload{Dataset: "d", Report: id, Public: []byte{4}, Share: []byte{5, 6}},
		&Prepare{Dataset: "d", Items: []Item{{Report: id, Message: []byte{1}}}},
		&Prepared{Items: []Item{{Report: id, Verdict: VerdictProof}}},
		&Decide{Dataset: "d", Items: []Item{{Report: id, Verdict: VerdictMalformed}}},
		&CreateRelease{Dataset: "d", Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: 256, Epsilon: 1}, Components: []payload.Component{payload.Count, payload.Probability}, Reports: 3, IDs: []payload.ReportID{id}},
		&ReleaseCreated{Reports: 2, Missing: []payload.ReportID{id}},
		&Query{Dataset: "d", Release: id, Component: payload.Count, Prefixes: []int{256}},
		&Answer{Reports: 9, Values: []uint64{1, 2}, Mechanism: mechanism.Params{Name: "kary", Bins: 256, Epsilon: 0.5, K: 16}},
		&ManifestDigest{Fields: []ManifestField{{Name: "grid", Digest: [32]byte{7}}}},
		&StatusRequest{Dataset: "d", Reports: 1, Compare: true, IDs: []payload.ReportID{id}},
		&Status{Dataset: "d", Counts: true, Servers: []ServerState{{Role: "leader", Reports: 1, Errors: []string{"x"},
			Releases:  []ReleaseState{{Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: 256, Epsilon: 1}, Components: []payload.Component{payload.Count}}},
			Processes: []ProcessState{{ID: "h/1-ab", Coordinator: true, UploadAddr: "127.0.0.1:7401", Uploads: 3, Started: 1, Seen: 2}, {ID: "h/2-cd"}}}}},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		t.Run(fmt.Sprintf("%T", m), func(t *testing.T) {
			b := Encode(m)
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(Encode(got), b) {
				t.Error("re-encoding differs")
			}
		})
	}
}

// TestDecodeErrors: every error matches ErrMalformed (and the wire's
// kind where there is one), and its text names the failed check.
func TestDecodeErrors(t *testing.T) {
	valid := Encode(&Query{Dataset: "d", Component: payload.Count, Prefixes: []int{1, 2}})
	tests := []struct {
		name string
		in   []byte
		kind error
		want string
	}{
		{"empty", nil, wire.ErrTruncated, "version: truncated"},
		{"version", append([]byte{1}, valid[1:]...), ErrMalformed, "protocol version 1"},
		{"kind", []byte{Version, 99}, ErrMalformed, "unknown message kind 99"},
		{"truncated", valid[:len(valid)-1], wire.ErrTruncated, "truncated"},
		{"trailing", append(valid, 0), wire.ErrTrailing, "trailing"},
		{"unsorted", Encode(&Query{Dataset: "d", Prefixes: []int{3, 2}}), ErrMalformed, "not strictly increasing"},
		{"zero prefix", Encode(&Query{Dataset: "d", Prefixes: []int{0}}), ErrMalformed, "not in [1, 2^40]"},
		{"component", Encode(&Query{Dataset: "d", Component: 9}), ErrMalformed, "unknown component 9"},
		{"epsilon", Encode(&CreateRelease{Dataset: "d", Mechanism: mechanism.Params{Bins: 4, Epsilon: -1}, Components: []payload.Component{payload.Count}}), ErrMalformed, "epsilon"},
		{"oversize", []byte{Version, byte(KindUpload), 0xff, 0xff, 0xff, 0xff}, wire.ErrTooLong, "exceeds the limit"},
		{"too many manifest fields", Encode(&ManifestDigest{Fields: make([]ManifestField, MaxFields+1)}), ErrMalformed, "fields: 65 exceed the limit 64"},
		{"key and verified report", Encode(&Upload{Dataset: "d", Key: []byte{1}, Share: []byte{2}}), ErrMalformed, "a DCF key and a verified report at once"},
		{"verdict", Encode(&Prepare{Dataset: "d", Items: []Item{{Verdict: numVerdicts}}}), ErrMalformed, "unknown verdict 6"},
		{"prepared without message", Encode(&Prepared{Items: []Item{{}}}), ErrMalformed, "verdict 0 with a 0-byte message"},
		{"rejection with message", Encode(&Prepare{Dataset: "d", Items: []Item{{Verdict: VerdictProof, Message: []byte{1}}}}), ErrMalformed, "verdict 4 with a 1-byte message"},
		{"rejection with message", Encode(&Decide{Dataset: "d", Items: []Item{{Verdict: VerdictProof, Message: []byte{1}}}}), ErrMalformed, "a message with a rejection in a decision"},
		{"report twice", Encode(&Decide{Dataset: "d", Items: []Item{{}, {}}}), ErrMalformed, "twice"},
		{"field values", Encode(&Answer{Field: make([]byte, 17), Mechanism: mechanism.Params{Name: "tree", Bins: 4, Epsilon: 1}}), ErrMalformed, "not a whole number of 16-byte elements"},
		{"old version", append([]byte{10}, valid[1:]...), ErrMalformed, "protocol version 10 is not supported (want 11)"},
		{"too many processes", Encode(&Status{Servers: []ServerState{{Processes: make([]ProcessState, MaxStatusProcs+1)}}}), ErrMalformed, "processes: 257 exceed the limit 256"},
		{"a manifest field twice", Encode(&ManifestDigest{Fields: []ManifestField{{Name: "grid"}, {Name: "grid"}}}), ErrMalformed, `fields: "grid" twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.in)
			if !errors.Is(err, ErrMalformed) || !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q (%v) containing %q", err, ErrMalformed, tt.kind, tt.want)
			}
		})
	}
}

func TestMalformedKeepsText(t *testing.T) {
	inner := errors.New("release record: report IDs not sorted")
	err := Malformed(inner)
	if err.Error() != inner.Error() || !errors.Is(err, ErrMalformed) || !errors.Is(err, inner) {
		t.Errorf("Malformed(%q) = %q, want the same text matching ErrMalformed and the error", inner, err)
	}
	if Malformed(nil) != nil || Malformed(err) != err {
		t.Error("Malformed of nil or of a malformed error changed it")
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		f.Add(Encode(m))
	}
	f.Add([]byte{Version, byte(KindAnswer), 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(Encode(m))
		if err != nil {
			t.Fatalf("re-decoding an accepted %T: %v", m, err)
		}
		if !bytes.Equal(Encode(again), Encode(m)) {
			t.Fatalf("%T does not round-trip", m)
		}
		if _, ok := m.(*Upload); ok && !bytes.Equal(Encode(m), b) {
			t.Fatalf("an upload decoded from %x encodes as %x: an upload's encoding must be canonical (the server hashes it as the bytes stored)", b, Encode(m))
		}
	})
}

func TestRemoteErrorNamesPeerOnce(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"leader: budget exhausted", "leader: budget exhausted"},
		{"budget exhausted", "leader: budget exhausted"},
		{"leaderless: x", "leader: leaderless: x"},
	} {
		t.Run(c.text, func(t *testing.T) {
			if got := (&RemoteError{Peer: "leader", Text: c.text}).Error(); got != c.want {
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
}

// TestRemoteErrorIs: the codes of the sentinels a peer wrapped survive
// the wire (Refusal, Encode, Decode, Call), and errors.Is matches them
// by code only: an uncoded error of the same text, another sentinel of
// the same text, or a sentinel only named in the text (%v) matches
// nothing.
func TestRemoteErrorIs(t *testing.T) {
	exhausted := errcode.New(errcode.BudgetExhausted, "budget exhausted")
	twin := errcode.New(errcode.Busy, "budget exhausted")
	roundTrip := func(refusal *Error) error {
		msg, err := Decode(Encode(refusal))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Errorf("querying: %w", msg.(*Error).Remote("leader"))
	}
	err := roundTrip(Refusalf("leader: release 01 refused: %w: spent ε=1", exhausted))
	if !errors.Is(err, exhausted) {
		t.Errorf("%v does not match %q", err, exhausted)
	}
	for _, other := range []error{twin, errors.New("budget exhausted"), ErrMalformed, errors.New(""), nil} {
		if errors.Is(err, other) {
			t.Errorf("%v matches %v", err, other)
		}
	}
	if named := roundTrip(Refusalf("leader: %v", exhausted)); errors.Is(named, exhausted) {
		t.Errorf("%v matches %q by its text", named, exhausted)
	}
	// A server relaying a peer's refusal sends its codes on.
	relayed := roundTrip(Refusalf("helper said: %w", err))
	if !errors.Is(relayed, exhausted) {
		t.Errorf("relayed %v lost the code of %q", relayed, exhausted)
	}
}

// TestErrorCodesBounded: a decoder refuses more codes than
// errcode.MaxCodes, and code zero; Refusal sends at most MaxCodes.
func TestErrorCodesBounded(t *testing.T) {
	many := make([]errcode.Code, errcode.MaxCodes+1)
	for k := range many {
		many[k] = errcode.Code(k + 1)
	}
	b := Encode(&Error{Codes: many})
	if m, err := Decode(b); err != nil || len(m.(*Error).Codes) != errcode.MaxCodes {
		t.Errorf("Encode of %d codes: %v, %v; want %d codes", len(many), m, err, errcode.MaxCodes)
	}
	for name, b := range map[string][]byte{
		"too many": {Version, byte(KindError), errcode.MaxCodes + 1},
		"zero":     {Version, byte(KindError), 1, 0, 0, 0, 0, 0, 0, 0, 0},
		"wide":     {Version, byte(KindError), 1, 0, 0, 1, 0, 0, 0, 0, 0},
	} {
		if _, err := Decode(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
