package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// TestServersOnPostgres runs the leader and the helper as `fedecdf
// server` processes, each on a PostgreSQL schema of its own, and
// restarts PostgreSQL (pg_ctl restart -m fast) while `fedecdf party
// --csv` uploads: the writes the restart cut fail and are not
// acknowledged, the party retries them, the servers reconnect without
// a restart of their own, and each store then holds every row's report
// ID exactly once (0 lost, 0 duplicated). A release counts each row
// once; after both server processes are killed and restarted on their
// databases it reads the same counts, and the ledger they kept refuses
// a release beyond the budget.
func TestServersOnPostgres(t *testing.T) {
	const n, k, concurrency = 200, 40, 4
	stores := map[string]string{"leader": pgtest.Schema(t), "helper": pgtest.Schema(t)}
	restart := pgtest.Restart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newClusterWith(t, ctx, n, clusterOptions{stores: stores, serverArgs: []string{"--log-level", "debug"}})
	csv, rows := writeRows(t, n)
	run := startParty("--manifest", c.manifest, "--input", csv, "--probability-column", "p",
		"--concurrency", strconv.Itoa(concurrency), "--retry-window", "60s")
	for c.accepted("leader") < k {
		select {
		case <-run.done:
			t.Fatalf("the party finished before the restart: %v\n%s", run.err, run.out)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", restart)
	cmd.WaitDelay = 10 * time.Second // the restarted postmaster may hold the output pipe
	if out, err := cmd.CombinedOutput(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		t.Fatalf("restarting PostgreSQL: %v\n%s", err, out)
	}
	<-run.done
	if want := fmt.Sprintf("%d of %d row(s) stored by both servers", n, n); run.err != nil || !strings.HasPrefix(run.out, want) {
		t.Fatalf("party across PostgreSQL's restart: %v\n%s\nwant %q", run.err, run.out, want)
	}
	// The restart ended each server's writing connection: a write it
	// received before reconnecting failed, unacknowledged, and the same
	// process stored the rest after reconnecting. A server may receive
	// none in that window (it reconnects within a second, Hold, while
	// the party retries at the other), but the party's writes during
	// the restart fail somewhere.
	failed := 0
	for _, role := range []string{"leader", "helper"} {
		n := strings.Count(c.logs[role].String(), "could not persist a report")
		if c.starts[role] != 1 {
			t.Errorf("the %s ran %d times across PostgreSQL's restart, want once", role, c.starts[role])
		}
		failed += n
		t.Logf("the %s: %d writes failed (not acknowledged) across the restart", role, n)
	}
	if failed == 0 {
		t.Error("no write failed across PostgreSQL's restart at either server: the restart cut no upload")
	}
	t.Logf("PostgreSQL restarted after %d rows: %s", k, strings.TrimSpace(run.out))

	e, err := c.release()
	if err != nil {
		t.Fatal(err)
	}
	want := exactRowCounts(t, c.m, rows)
	if e.N != n || !slices.Equal(e.Counts, want) {
		t.Errorf("release over %d reports with counts %v, want %d, each row once: %v", e.N, e.Counts, n, want)
	}
	c.kill("leader")
	c.kill("helper")
	ids := rowIDs(t, c.m.Dataset, csv, rows)
	for _, role := range []string{"leader", "helper"} {
		if got := storedIDs(t, stores[role], c.m.Dataset); !maps.Equal(got, ids) {
			t.Errorf("the %s's database holds %d reports, want the %d rows' IDs exactly", role, len(got), len(ids))
		}
	}
	c.start("helper")
	c.start("leader")
	again, err := c.release()
	if err != nil {
		t.Fatalf("the second release after restarting both servers: %v", err)
	}
	if again.N != n || !slices.Equal(again.Counts, want) {
		t.Errorf("after restarting both servers: %d reports, counts %v; want %d, %v", again.N, again.Counts, n, want)
	}
	_, err = c.release()
	wantBudgetRefusal(t, "a third release on the restored ledgers", err)
}
