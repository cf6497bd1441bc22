package deploy

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// TestWrongManifestDestroysNothing plays the restart loop of an operator
// on an edited manifest: both servers hold reports they acknowledged
// (not yet verified: no peer check ran), and each edit that changes what
// the stored reports mean (the grid's bins, max, scale and min, the
// dataset, the backend) is refused at every start, naming the field, the
// store's and the manifest's values, before any stored report is read.
// Back on the right manifest, every acknowledged report is counted
// exactly at both servers.
func TestWrongManifestDestroysNothing(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	const n = 12
	inst := instances(n, 3)
	d.submitAll(inst)
	edits := []struct {
		name       string
		edit       func(*manifest.Manifest)
		field      string
		old, value string
	}{
		{"128 bins", func(m *manifest.Manifest) { m.Grid.Bins = 2 * bins }, "grid.bins", "64", "128"},
		{"max 2", func(m *manifest.Manifest) { m.Grid.Max = 2 }, "grid.max", "1", "2"},
		{"log scale", func(m *manifest.Manifest) { m.Grid.Scale, m.Grid.Min = "log", 0.001 }, "grid.scale", "linear", "log"},
		{"dataset", func(m *manifest.Manifest) { m.Dataset = "other" }, "dataset", "test", "other"},
		{"backend", func(m *manifest.Manifest) { m.Backend = string(server.Additive) }, "backend", "dcf", "additive"},
	}
	at := map[server.Role]*Server{server.Leader: d.leader, server.Helper: d.helper}
	listen := map[server.Role]string{}
	for role, s := range at {
		listen[role] = s.Addrs()[0].String()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		for _, e := range edits {
			m := *d.m
			e.edit(&m)
			for _, role := range []server.Role{server.Helper, server.Leader} {
				_, err := d.startWith(role, &m, ServerConfig{Store: filepath.Join(d.dir, role.String()+".db")})
				want := []string{e.field, `"` + e.old + `" in the store`, `"` + e.value + `" in the manifest`, "new store file"}
				if !errors.Is(err, ErrStoreConfig) {
					t.Fatalf("round %d, %s: the %s started (%v), want %v", round, e.name, role, err, ErrStoreConfig)
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: the refusal %q does not say %q", e.name, err, w)
					}
				}
			}
		}
	}
	d.helper = d.start(server.Helper, listen[server.Helper])
	d.leader = d.start(server.Leader, listen[server.Leader])
	if got := d.counts(); got != [2]int{n, n} {
		t.Fatalf("after the restart loop the servers hold %v reports, want %d each", got, n)
	}
	checkExact(t, d.query(), plainCounts(t, d.m, inst))
}

// TestNeighboursChangeOverAStore: before any release a store's
// neighbouring relation may change (logged at WARN, recorded, and
// changed back); once a release was made under replace, a start under
// addremove is refused outright, saying why, and nothing is recorded: the
// next start on the store's manifest works. A store that holds nothing
// takes any change.
func TestNeighboursChangeOverAStore(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	store, at := filepath.Join(d.dir, "helper.db"), d.helper.Addrs()
	addremove := *d.m
	addremove.Mechanism.Neighbours = "addremove"
	other := *d.m
	other.Grid.Bins = 32
	restart := func(m *manifest.Manifest, log *bytes.Buffer) error {
		t.Helper()
		d.helper.Close()
		cfg := ServerConfig{Store: store, Listen: at}
		if log != nil {
			cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
		}
		s, err := d.startWith(server.Helper, m, cfg)
		if err == nil {
			d.helper = s
		}
		return err
	}
	for _, m := range []*manifest.Manifest{&other, d.m} {
		if err := restart(m, nil); err != nil {
			t.Fatalf("a change over a store that holds nothing: %v", err)
		}
	}
	d.submitAll(instances(3, 5))
	var log bytes.Buffer
	if err := restart(&addremove, &log); err != nil {
		t.Fatalf("addremove before any release: %v", err)
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "neighbouring relation changed") {
		t.Errorf("the change before any release is not logged at WARN:\n%s", log.String())
	}
	if err := restart(d.m, nil); err != nil {
		t.Fatalf("back to replace before any release: %v", err)
	}
	d.query()
	err := restart(&addremove, nil)
	if !errors.Is(err, ErrStoreConfig) || !strings.Contains(err.Error(), "refused outright") || !strings.Contains(err.Error(), "exact number of reports") {
		t.Fatalf("addremove after a release under replace: %v, want %v refused outright", err, ErrStoreConfig)
	}
	if err := restart(d.m, nil); err != nil {
		t.Fatalf("the store's own manifest after the refusal: %v", err)
	}
	if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: 0.5, Label: 1}); err != nil {
		t.Fatal(err)
	}
}
