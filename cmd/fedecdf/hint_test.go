package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

// refused returns err as an analyst receives a server's refusal of it.
func refused(t *testing.T, err error) error {
	t.Helper()
	msg, derr := protocol.Decode(protocol.Encode(protocol.Refusal(err)))
	if derr != nil {
		t.Fatal(derr)
	}
	return msg.(*protocol.Error).Remote("leader")
}

// TestHints: the command line adds to a library error the fedecdf
// command that resolves it, and nothing to the others.
func TestHints(t *testing.T) {
	id := payload.ReleaseID{0xab, 0xcd}
	pending := fmt.Errorf("leader: release %v %w: helper: unreachable; nothing is released", id, server.ErrReleasePending)
	mismatch := fmt.Errorf("%w with the helper: grid differ; start both servers on the same manifest file", server.ErrManifestMismatch)
	for _, tt := range []struct {
		name string
		err  error
		want string // "" for no hint
	}{
		{"no answer to a release", &remote.ReleaseError{Release: id, Err: context.DeadlineExceeded}, "fedecdf query --release " + id.String()},
		{"a pending release", &remote.ReleaseError{Release: id, Err: refused(t, pending)}, "fedecdf query --release " + id.String()},
		{"a pending release, no ID at hand", fmt.Errorf("x: %w", refused(t, pending)), "fedecdf query --release ID"},
		{"a refused release", &remote.ReleaseError{Release: id, Err: refused(t, fmt.Errorf("leader: %w", ledger.ErrBudgetExhausted))}, ""},
		{"manifest mismatch, remote", refused(t, mismatch), "fedecdf manifest writes the manifest"},
		{"manifest mismatch, at start", fmt.Errorf("leader: %w", mismatch), "fedecdf manifest writes the manifest"},
		{"the words only", refused(t, errors.New("manifest mismatch: is pending: the helper has not confirmed it")), ""},
		{"other", errors.New("no such file"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := describe(tt.err)
			if !strings.HasPrefix(got, tt.err.Error()) {
				t.Errorf("%q does not start with the error %q", got, tt.err)
			}
			if h := hint(tt.err); tt.want == "" && h != "" || !strings.Contains(h, tt.want) || tt.want != "" && got != tt.err.Error()+"; "+h {
				t.Errorf("%q, want a hint with %q", got, tt.want)
			}
		})
	}
}

// TestManifestHints: a manifest that Check refuses gets the fedecdf
// command that writes a good one.
func TestManifestHints(t *testing.T) {
	good, err := runManifest(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*deploy.Manifest)
		want string
	}{
		{"old version", func(m *deploy.Manifest) { m.Version = 1 }, "`fedecdf manifest`"},
		{"other protocol", func(m *deploy.Manifest) { m.Protocol-- }, "`fedecdf manifest`"},
		{"no analyst", func(m *deploy.Manifest) { m.Analysts = nil }, "fedecdf manifest --analyst FILE.pub"},
		{"the leader as analyst", func(m *deploy.Manifest) { m.Analysts = []string{m.Leader.PeerID} }, "fedecdf keygen"},
		{"an analyst as operator", func(m *deploy.Manifest) { m.Operators = m.Analysts }, "fedecdf keygen"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := *good
			c.edit(&m)
			err := m.Check()
			if err == nil {
				t.Fatal("Check passed")
			}
			if got := describe(err); !strings.Contains(got, c.want) || !strings.HasPrefix(got, err.Error()+"; ") {
				t.Errorf("%q, want the error then a hint naming %q", got, c.want)
			}
		})
	}
}
