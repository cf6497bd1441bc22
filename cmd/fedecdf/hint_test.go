package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
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
		{"a server down", fmt.Errorf("sealed upload to the helper at 127.0.0.1:1: %w", &client.DialError{Server: manifest.HelperName, Err: syscall.ECONNREFUSED}), "is `fedecdf server --role helper` running"},
		{"a store in use", lockedStore(t), "another fedecdf server running on it"},
		{"a store of another format", fmt.Errorf("store: x.db: %w: the file is format [9]", store.ErrFormat), "use the fedecdf version that wrote it"},
		{"a database of a newer schema", fmt.Errorf("store: %w", store.ErrSchema), "use the fedecdf version that wrote it"},
		{"a damaged store", fmt.Errorf("store: x.db: %w", store.ErrDamaged), "fedecdf server quarantine"},
		{"a password on the command line", passwordInDSN(t), "--store-password-file"},
		{"a changed budget", fmt.Errorf("leader: dataset %q: %w", "d", deploy.ErrBudgetChanged), "--accept-budget-change"},
		{"an address in use", fmt.Errorf("%w: /ip4/127.0.0.1/tcp/4001", p2p.ErrAddrInUse), "another --listen address"},
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

// lockedStore returns the error of opening a store another holds.
func lockedStore(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	second, err := store.Open(path)
	if err == nil {
		second.Close()
		t.Fatal("a second Open of a held store succeeded")
	}
	return err
}

// passwordInDSN returns the error of a PostgreSQL DSN with a password.
func passwordInDSN(t *testing.T) error {
	t.Helper()
	s, err := store.OpenPostgres("postgres://u:secret@localhost/db", "")
	if err == nil {
		s.Close()
		t.Fatal("a DSN with a password was accepted")
	}
	return err
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
		edit func(*manifest.Manifest)
		want string
	}{
		{"old version", func(m *manifest.Manifest) { m.Version = 1 }, "`fedecdf manifest`"},
		{"other protocol", func(m *manifest.Manifest) { m.Protocol-- }, "`fedecdf manifest`"},
		{"no analyst", func(m *manifest.Manifest) { m.Analysts = nil }, "fedecdf manifest --analyst FILE.pub"},
		{"the leader as analyst", func(m *manifest.Manifest) { m.Analysts = []string{m.Leader.PeerID} }, "fedecdf keygen"},
		{"an analyst as operator", func(m *manifest.Manifest) { m.Operators = m.Analysts }, "fedecdf keygen"},
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
