package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/deploy"
)

// runManifest runs "fedecdf manifest" in-process with fresh keys for the
// servers and one analyst, plus args.
func runManifest(t *testing.T, args ...string) (*deploy.Manifest, error) {
	t.Helper()
	dir := t.TempDir()
	base := []string{"--out", filepath.Join(dir, "manifest.json"), "--leader-addr", "/ip4/127.0.0.1/tcp/1", "--helper-addr", "/ip4/127.0.0.1/tcp/2"}
	for _, name := range []string{"leader", "helper", "analyst"} {
		id, err := deploy.NewIdentity()
		if err != nil {
			t.Fatal(err)
		}
		key := filepath.Join(dir, name+".key")
		if err := deploy.WriteIdentity(key, id); err != nil {
			t.Fatal(err)
		}
		base = append(base, "--"+name, key+".pub")
	}
	cmd := newManifestCommand()
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(append(base, args...))
	if err := cmd.Execute(); err != nil {
		return nil, err
	}
	return deploy.ReadManifest(filepath.Join(dir, "manifest.json"))
}

// TestManifestCommandPolicy: --neighbours, --allow, --max-delta and
// --max-epsilon write the policy; by default it allows exactly the
// release of --mechanism and --delta under replace-one neighbours; a
// release outside the policy, or another spelling of the relation, is
// refused.
func TestManifestCommandPolicy(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want deploy.Mech // Name, Epsilon, K left to the defaults
		err  string
	}{
		{"defaults", nil, deploy.Mech{Neighbours: "replace", Allowed: []string{"auto"}}, ""},
		{"approximate", []string{"--mechanism", "cascade", "--delta", "1e-7"}, deploy.Mech{Delta: 1e-7, Neighbours: "replace", Allowed: []string{"cascade"}, MaxDelta: 1e-7}, ""},
		{"policy flags", []string{"--neighbours", "addremove", "--allow", "tree,kary", "--allow", "auto", "--max-delta", "1e-6", "--max-epsilon", "2"},
			deploy.Mech{Neighbours: "addremove", Allowed: []string{"tree", "kary", "auto"}, MaxDelta: 1e-6, MaxEpsilon: 2}, ""},
		{"another spelling of the relation", []string{"--neighbours", "add-remove"}, deploy.Mech{}, `neighbours "add-remove"`},
		{"a release outside --allow", []string{"--allow", "tree"}, deploy.Mech{}, "allows the mechanisms tree"},
		{"a release δ above --max-delta", []string{"--mechanism", "cascade", "--delta", "1e-6", "--max-delta", "1e-7"}, deploy.Mech{}, "δ ≤ 1e-07"},
		{"a release ε above --max-epsilon", []string{"--epsilon", "3", "--max-epsilon", "2"}, deploy.Mech{}, "ε ≤ 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := runManifest(t, c.args...)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("fedecdf manifest %v: %v, want an error with %q", c.args, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := m.Mechanism
			if got.Neighbours != c.want.Neighbours || !slices.Equal(got.Allowed, c.want.Allowed) || got.Delta != c.want.Delta || got.MaxDelta != c.want.MaxDelta || got.MaxEpsilon != c.want.MaxEpsilon {
				t.Fatalf("mechanism %+v, want the policy %+v", got, c.want)
			}
		})
	}
}
