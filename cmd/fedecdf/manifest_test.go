package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
)

// runManifest runs "fedecdf manifest" in-process with fresh keys for the
// servers and one analyst, plus args.
func runManifest(t *testing.T, args ...string) (*manifest.Manifest, error) {
	t.Helper()
	return runManifestOf(t, []string{"leader", "helper", "analyst"}, args...)
}

// runManifestOf runs "fedecdf manifest" in-process with fresh keys
// DIR/NAME.key for names, each passed as --NAME DIR/NAME.key.pub, plus
// args, in which "DIR" is replaced by the key directory.
func runManifestOf(t *testing.T, names []string, args ...string) (*manifest.Manifest, error) {
	t.Helper()
	dir := t.TempDir()
	base := []string{"--output", filepath.Join(dir, "manifest.json"), "--leader-addr", "/ip4/127.0.0.1/tcp/1", "--helper-addr", "/ip4/127.0.0.1/tcp/2"}
	for _, name := range []string{"leader", "helper", "analyst", "operator"} {
		id, err := manifest.NewIdentity()
		if err != nil {
			t.Fatal(err)
		}
		key := filepath.Join(dir, name+".key")
		if err := manifest.WriteIdentity(key, id); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(names, name) {
			base = append(base, "--"+name, key+".pub")
		}
	}
	for _, a := range args {
		base = append(base, strings.ReplaceAll(a, "DIR", dir))
	}
	cmd := newManifestCommand()
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(base)
	if err := cmd.Execute(); err != nil {
		return nil, err
	}
	return manifest.ReadManifest(filepath.Join(dir, "manifest.json"))
}

// TestManifestCommandRefuses: flags under which no release could run,
// a missing key or address, the same address for both servers, an
// address no one can dial and a server's key as analyst are refused,
// naming the flag or the value.
func TestManifestCommandRefuses(t *testing.T) {
	all := []string{"leader", "helper", "analyst"}
	for _, c := range []struct {
		name  string
		names []string
		args  []string
		err   string
	}{
		{"ε above the budget", all, []string{"--epsilon", "5", "--budget-epsilon", "4"}, "release epsilon 5 exceeds the total budget epsilon 4"},
		{"zero budget", all, []string{"--budget-epsilon", "0"}, "budget epsilon 0 is not positive"},
		{"δ above the budget", all, []string{"--mechanism", "cascade", "--delta", "1e-7"}, "release delta 1e-07 exceeds the total budget delta 0"},
		{"no analyst", []string{"leader", "helper"}, nil, "--analyst is required"},
		{"no leader", []string{"helper", "analyst"}, nil, "--leader is required"},
		{"the leader as analyst", []string{"leader", "helper"}, []string{"--analyst", "DIR/leader.key.pub"}, "is a server's key"},
		{"the same address", all, []string{"--helper-addr", "/ip4/127.0.0.1/tcp/1"}, "leader and helper both at /ip4/127.0.0.1/tcp/1"},
		{"an address no one can dial", all, []string{"--leader-addr", "/ip4/0.0.0.0/tcp/4001"}, `leader: address "/ip4/0.0.0.0/tcp/4001" is the unspecified address 0.0.0.0`},
		{"an address without a port", all, []string{"--helper-addr", "/ip4/10.0.0.2"}, `helper: address "/ip4/10.0.0.2" has no port`},
		{"a transport fedecdf lacks", all, []string{"--helper-addr", "/ip4/10.0.0.2/udp/4002/quic-v1"}, "a transport this fedecdf does not have"},
		{"an upload address no one can dial", all, []string{"--leader-upload", "0.0.0.0:7401"}, `leader: upload_addr "0.0.0.0:7401"`},
		{"the same upload address", all, []string{"--leader-upload", "10.0.0.1:7401", "--helper-upload", "10.0.0.1:7401"}, "upload address of its own"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := runManifestOf(t, c.names, c.args...); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("fedecdf manifest %v: %v, want an error with %q", c.args, err, c.err)
			}
		})
	}
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
		want manifest.Mech // Name, Epsilon, K left to the defaults
		err  string
	}{
		{"defaults", nil, manifest.Mech{Neighbours: "replace", Allowed: []string{"auto", "partitioned"}}, ""},
		{"approximate", []string{"--mechanism", "cascade", "--delta", "1e-7", "--budget-delta", "1e-6"}, manifest.Mech{Delta: 1e-7, Neighbours: "replace", Allowed: []string{"cascade"}, MaxDelta: 1e-7}, ""},
		{"policy flags", []string{"--neighbours", "addremove", "--allow", "tree,kary", "--allow", "auto", "--max-delta", "1e-6", "--max-epsilon", "2"},
			manifest.Mech{Neighbours: "addremove", Allowed: []string{"tree", "kary", "auto"}, MaxDelta: 1e-6, MaxEpsilon: 2}, ""},
		{"another spelling of the relation", []string{"--neighbours", "add-remove"}, manifest.Mech{}, `neighbours "add-remove"`},
		{"a release outside --allow", []string{"--allow", "tree"}, manifest.Mech{}, "allows the mechanisms tree"},
		{"a release δ above --max-delta", []string{"--mechanism", "cascade", "--delta", "1e-6", "--max-delta", "1e-7", "--budget-delta", "1e-5"}, manifest.Mech{}, "δ ≤ 1e-07"},
		{"a release ε above --max-epsilon", []string{"--epsilon", "3", "--max-epsilon", "2"}, manifest.Mech{}, "ε ≤ 2"},
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

// manifest --operator lists an operator's key (status only); the
// analyst's key as operator is refused, naming the reason.
func TestManifestOperator(t *testing.T) {
	m, err := runManifestOf(t, []string{"leader", "helper", "analyst", "operator"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Operators) != 1 || m.Operators[0] == m.Analysts[0] {
		t.Errorf("operators %v (analysts %v), want the operator's key", m.Operators, m.Analysts)
	}
	if _, err := runManifest(t, "--operator", "DIR/analyst.key.pub"); err == nil || !strings.Contains(err.Error(), "is a server's or an analyst's key") {
		t.Errorf("the analyst's key as operator: %v", err)
	}
}

// TestManifestUploadFlags: --leader-upload and --helper-upload set the
// servers' sealed-upload addresses; without them a manifest has none.
func TestManifestUploadFlags(t *testing.T) {
	m, err := runManifest(t, "--leader-upload", "10.0.0.1:7401", "--helper-upload", "10.0.0.2:7401")
	if err != nil {
		t.Fatal(err)
	}
	if m.Leader.UploadAddr != "10.0.0.1:7401" || m.Helper.UploadAddr != "10.0.0.2:7401" {
		t.Errorf("upload addresses %q, %q", m.Leader.UploadAddr, m.Helper.UploadAddr)
	}
	if m, err = runManifest(t); err != nil || m.Leader.UploadAddr != "" || m.Helper.UploadAddr != "" {
		t.Errorf("without the flags: %+v, %v; want no upload addresses", m, err)
	}
	m, err = runManifest(t, "--leader-upload", "10.0.0.1:7401,10.0.0.3:7401", "--leader-upload", "10.0.0.5:7401", "--helper-upload", "10.0.0.2:7401")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Leader.UploadAddrs(); !slices.Equal(got, []string{"10.0.0.1:7401", "10.0.0.3:7401", "10.0.0.5:7401"}) || len(m.Helper.MoreUploadAddrs) != 0 {
		t.Errorf("several leader upload addresses: %v (helper %v)", got, m.Helper.UploadAddrs())
	}
	if _, err := runManifest(t, "--leader-upload", "10.0.0.1:7401,10.0.0.1:7401"); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("an upload address listed twice: %v", err)
	}
}
