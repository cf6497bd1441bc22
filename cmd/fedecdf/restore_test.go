package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/server"
)

// TestRestoredStoreRefusesReleases: the leader's store is restored from
// a backup taken before a release (a copy of its bbolt file; with
// FEDECDF_TEST_POSTGRES also a pg_dump of its PostgreSQL schema, put
// back with pg_restore). The restarted leader finds at first contact
// that its ledger holds fewer releases than the helper's
// (server.ErrLedgerRewound), logs it, and the pair refuses releases —
// the budget left on the forgotten ledger is not sold again — until the
// latest state is restored; then a release is created as before.
func TestRestoredStoreRefusesReleases(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		var path string
		testRestore(t, nil, func(c *crashCluster, backup bool) {
			path = filepath.Join(c.dir, "leader.db")
			if backup {
				copyFile(t, path, path+".backup")
				return
			}
			copyFile(t, path, path+".latest")
			copyFile(t, path+".backup", path)
		}, func(c *crashCluster) { copyFile(t, path+".latest", path) })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Schema(t)
		base, schema := pgtest.BaseDSN(t), dsn[strings.LastIndex(dsn, "search_path=")+len("search_path="):]
		dump := func(file string) {
			run(t, "pg_dump", "--format=custom", "--schema="+schema, "--file="+file, base)
		}
		restore := func(file string) {
			run(t, "pg_restore", "--clean", "--if-exists", "--single-transaction", "--dbname="+base, file)
		}
		dir := t.TempDir()
		testRestore(t, map[string]string{"leader": dsn}, func(c *crashCluster, backup bool) {
			if backup {
				dump(filepath.Join(dir, "backup"))
				return
			}
			dump(filepath.Join(dir, "latest"))
			restore(filepath.Join(dir, "backup"))
		}, func(c *crashCluster) { restore(filepath.Join(dir, "latest")) })
	})
}

// testRestore runs the scenario with the leader's store stores["leader"]
// (a bbolt file when nil): snapshot(c, true) takes the backup with the
// leader stopped, snapshot(c, false) saves the latest state and puts
// the backup in its place, latest(c) puts the latest state back.
func testRestore(t *testing.T, stores map[string]string, snapshot func(c *crashCluster, backup bool), latest func(c *crashCluster)) {
	const k = 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newClusterWith(t, ctx, k, clusterOptions{stores: stores})
	p := c.newParty()
	for _, x := range client.DemoInstances(k, 5) {
		r, err := p.NewReport(x)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	c.kill("leader")
	snapshot(c, true)
	c.start("leader")
	if _, err := c.release(); err != nil {
		t.Fatalf("the release after the backup: %v", err)
	}
	c.kill("leader")
	snapshot(c, false) // the leader's store restored from the backup
	c.start("leader")
	// The budget admits one more release: the restored ledger, which
	// has spent nothing, must not admit it, nor any.
	_, err := c.release()
	if err == nil || !strings.Contains(err.Error(), server.ErrLedgerRewound.Error()) {
		t.Fatalf("a release with the leader's store restored from before the last: %v, want %q", err, server.ErrLedgerRewound)
	}
	if !c.logged("helper", "refusing releases: the two ledgers disagree") {
		t.Errorf("the helper's log does not say that a ledger went back:\n%s", c.logs["helper"])
	}
	if !c.logged("leader", "the leader's store was restored from an older backup") {
		t.Errorf("the leader's log does not name the store restored:\n%s", c.logs["leader"])
	}
	c.kill("leader")
	latest(c)
	c.start("leader")
	if _, err := c.release(); err != nil {
		t.Fatalf("a release once the latest state is back: %v", err)
	}
	_, err = c.release()
	wantBudgetRefusal(t, "a third release", err)
}

// copyFile copies the file from to to (mode 0600).
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(to+".tmp", to); err != nil {
		t.Fatal(err)
	}
}

// run runs a PostgreSQL client program, failing t on an error.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
		if len(matches) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		path = matches[len(matches)-1]
	}
	if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
