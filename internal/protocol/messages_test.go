package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/wire"
)

func sampleMessages() []Message {
	id := payload.ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	return []Message{
		&Error{Text: "budget exhausted"},
		&Ack{Duplicate: true},
		&Upload{Dataset: "d", Report: id, Key: []byte{1, 2, 3}},
		&OpenQuery{Dataset: "d", Query: id, Component: payload.Label, Prefixes: []int{1, 5, 9}},
		&Shares{Dataset: "d", Query: id, Batch: [32]byte{9}, Report: id, Values: []uint64{7, 1 << 63}},
		&CreateRelease{Dataset: "d", Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: 256, Epsilon: 1}, Components: []payload.Component{payload.Count, payload.Probability}, Reports: 3, IDs: []payload.ReportID{id}},
		&ReleaseCreated{Reports: 2, Missing: []payload.ReportID{id}},
		&Query{Dataset: "d", Release: id, Component: payload.Count, Prefixes: []int{256}},
		&Answer{Reports: 9, Values: []uint64{1, 2}, Mechanism: mechanism.Params{Name: "kary", Bins: 256, Epsilon: 0.5, K: 16}},
		&ManifestDigest{Fields: []ManifestField{{Name: "grid", Digest: [32]byte{7}}}},
		&StatusRequest{Dataset: "d", Reports: 1, Compare: true, IDs: []payload.ReportID{id}},
		&Status{Dataset: "d", Counts: true, Servers: []ServerState{{Role: "leader", Reports: 1, Errors: []string{"x"},
			Releases: []ReleaseState{{Release: id, Mechanism: mechanism.Params{Name: "tree", Bins: 256, Epsilon: 1}, Components: []payload.Component{payload.Count}}}}}},
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

// TestRemoteErrorIs: a sentinel the peer wrapped survives the wire as
// text, and errors.Is finds it there.
func TestRemoteErrorIs(t *testing.T) {
	exhausted := errors.New("budget exhausted")
	var err error = &RemoteError{Peer: "leader", Text: "leader: release 01 refused: budget exhausted: spent ε=1"}
	if !errors.Is(fmt.Errorf("querying: %w", err), exhausted) {
		t.Errorf("%v does not match %q", err, exhausted)
	}
	for _, other := range []error{errors.New("unknown release"), errors.New(""), nil} {
		if errors.Is(err, other) {
			t.Errorf("%v matches %v", err, other)
		}
	}
}

// TestOpenQueryDigestBindsEveryField: a batch differing in any field has
// another digest, so shares bound to one batch cannot pass for another's.
func TestOpenQueryDigestBindsEveryField(t *testing.T) {
	base := OpenQuery{Dataset: "d", Query: payload.ID{1}, Component: payload.Count, Prefixes: []int{4, 16}}
	for _, tc := range []struct {
		name   string
		change func(*OpenQuery)
	}{
		{"dataset", func(q *OpenQuery) { q.Dataset = "e" }},
		{"query", func(q *OpenQuery) { q.Query = payload.ID{2} }},
		{"component", func(q *OpenQuery) { q.Component = payload.Label }},
		{"prefix", func(q *OpenQuery) { q.Prefixes = []int{5, 16} }},
		{"prefix added", func(q *OpenQuery) { q.Prefixes = []int{4, 16, 17} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := base
			q.Prefixes = slices.Clone(base.Prefixes)
			tc.change(&q)
			if q.Digest() == base.Digest() {
				t.Errorf("%+v has the digest of %+v", q, base)
			}
		})
	}
	if again := base; again.Digest() != base.Digest() {
		t.Error("the digest of one batch is not deterministic")
	}
}
