package server

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// overTheWire returns err as a caller receives it: refused by a server
// (protocol.Refusal), encoded, decoded and turned into the caller's
// *protocol.RemoteError.
func overTheWire(t *testing.T, peer transport.PeerID, err error) error {
	t.Helper()
	msg, derr := protocol.Decode(protocol.Encode(protocol.Refusal(err)))
	if derr != nil {
		t.Fatal(derr)
	}
	return msg.(*protocol.Error).Remote(peer)
}

// TestWireErrorsMatchByCode: the refusals whose text contains another
// sentinel's text no longer match it; each matches its own sentinel.
func TestWireErrorsMatchByCode(t *testing.T) {
	for _, tt := range []struct {
		name     string
		sent     error
		is, isnt error
	}{
		{"drop while a release is created is not ErrReleaseBusy",
			fmt.Errorf("helper: dropping reports of dataset %q: %w; try again later", "d", ErrBusy), ErrBusy, ErrReleaseBusy},
		{"ErrReleaseBusy is not ErrBusy",
			fmt.Errorf("helper: release 01 %w", ErrReleaseBusy), ErrReleaseBusy, ErrBusy},
		{"a file that already exists is not ErrReleaseExists",
			fmt.Errorf("helper: %w", &fs.PathError{Op: "open", Path: "/var/lib/x", Err: fs.ErrExist}), nil, ErrReleaseExists},
		{"ErrNotCharged named in the text only",
			fmt.Errorf("helper: release 01: %v", ErrNotCharged), nil, ErrNotCharged},
		{"ErrNotCharged wrapped",
			fmt.Errorf("helper: release 01: %w", ErrNotCharged), ErrNotCharged, ErrReleaseAborted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := overTheWire(t, "helper", tt.sent)
			if err.Error() != tt.sent.Error() {
				t.Errorf("text %q, want %q", err, tt.sent)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v does not match %q", err, tt.is)
			}
			if errors.Is(err, tt.isnt) {
				t.Errorf("%v matches %q", err, tt.isnt)
			}
		})
	}
}

// TestAbortNeedsTheCode: the leader deletes a pending release only on a
// helper refusal carrying ErrNotCharged's code; a refusal that merely
// says the same words (a forged or relayed text) leaves it pending.
func TestAbortNeedsTheCode(t *testing.T) {
	p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 2}, MinReports: 1}, nil)
	p.upload(t, 0.1, 0.5)
	m := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0x6b}, Mechanism: spec("tree", 1, 0, mechanism.ReplaceOne), Components: []payload.Component{payload.Count}}
	p.net.SetFaults(cutNth("leader", "helper", protocol.KindCreateRelease, 1, transport.LoseResponse))
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", m); !errors.Is(err, ErrReleasePending) {
		t.Fatalf("first attempt: %v, want %v", err, ErrReleasePending)
	}
	d := p.leader.datasets["d"]
	words := overTheWire(t, "helper", fmt.Errorf("helper: release %v: %v", m.Release, ErrNotCharged))
	if err := p.leader.abortOrKeep(d, m, words); !errors.Is(err, ErrReleasePending) || len(d.pending) != 1 {
		t.Fatalf("a refusal naming ErrNotCharged in its text: %v, want the release kept pending", err)
	}
	coded := overTheWire(t, "helper", fmt.Errorf("helper: release %v: %w", m.Release, ErrNotCharged))
	if err := p.leader.abortOrKeep(d, m, coded); !errors.Is(err, ErrReleaseAborted) || len(d.pending) != 0 {
		t.Fatalf("the helper's coded ErrNotCharged: %v, want the release aborted", err)
	}
}

// sentinels are the package's sentinel errors, by name.
var sentinels = map[string]error{
	"ErrUnknownDataset": ErrUnknownDataset, "ErrUnknownRelease": ErrUnknownRelease,
	"ErrReleaseExists": ErrReleaseExists, "ErrNotLeader": ErrNotLeader,
	"ErrTooFewReports": ErrTooFewReports, "ErrReleasePending": ErrReleasePending,
	"ErrReleaseAborted": ErrReleaseAborted, "ErrManifestMismatch": ErrManifestMismatch,
	"ErrNotCharged": ErrNotCharged, "ErrReleaseBusy": ErrReleaseBusy,
	"ErrReportSetChanged": ErrReportSetChanged, "ErrLedgerRewound": ErrLedgerRewound,
	"ErrReportsNotKept": ErrReportsNotKept, "ErrPolicy": ErrPolicy, "ErrBusy": ErrBusy,
	"ErrTooManyReports": ErrTooManyReports, "ErrUploadChanged": ErrUploadChanged,
}

// TestEverySentinelHasAWireCode: every exported Err variable the
// package declares (read from its source, so that a new one cannot be
// left out) is a sentinel with a wire code of its own (internal/errcode),
// so that any refusal that reaches a peer, a party or an analyst is
// matched by its code, never by its text.
func TestEverySentinelHasAWireCode(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
							declared = append(declared, n.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(declared)
	if listed := slices.Sorted(maps.Keys(sentinels)); !slices.Equal(declared, listed) {
		t.Fatalf("the package declares the sentinels %v, the test lists %v", declared, listed)
	}
	seen := map[errcode.Code]string{}
	for _, name := range declared {
		t.Run(name, func(t *testing.T) {
			code := errcode.CodeOf(sentinels[name])
			if code == 0 {
				t.Fatalf("%s has no wire code", name)
			}
			if other, dup := seen[code]; dup {
				t.Fatalf("%s has the code %d of %s", name, code, other)
			}
			seen[code] = name
			if err := overTheWire(t, "helper", fmt.Errorf("helper: %w", sentinels[name])); !errors.Is(err, sentinels[name]) {
				t.Errorf("%s sent over the wire: %v does not match it", name, err)
			}
		})
	}
}
