//go:build unix

package main

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestCoordinatorDemotedStandsBy cuts the coordinating leader process
// (leader1) from PostgreSQL (stopped, its connections ended by
// pg_terminate_backend) until the standby (leader2) takes the lock;
// then leader1 runs again: it does not exit but stands by,
// acknowledging uploads as a standby; a release through leader2 counts
// every acknowledged report once. Then leader2 is
// killed and leader1 takes over again, and a release through it counts
// every acknowledged report once; the ledger holds just the two.
func TestCoordinatorDemotedStandsBy(t *testing.T) {
	const first, n = 20, 60
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, first)
	reports, bins := c.newReports(c.party(), n)
	up := newUploads()
	up.send(ctx, []*client.Party{c.party()}, reports[:first], nil)

	dsn := c.stores["leader"]
	// Cut leader1 from the database as a partition would: stopped
	// (SIGSTOP), it cannot reconnect and take its lock back before
	// leader2 tries, which a mere pg_terminate_backend let it do under
	// load; once leader2 took over, leader1 runs again and finds the
	// lock taken.
	c.signal("leader1", syscall.SIGSTOP)
	queryInt(t, dsn, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'leader1'`)
	c.waitLog("leader2", c.procs["leader2"], func(log string) bool { return strings.Contains(log, "taking over") })
	c.signal("leader1", syscall.SIGCONT)
	c.waitLog("leader1", c.procs["leader1"], func(log string) bool {
		return strings.Contains(log, "coordination lost") && strings.Contains(log, "standing by: recording sealed uploads")
	})

	// Through leader1 (and helper1) only: leader1, demoted, records them.
	viaDemoted := newUploads()
	viaDemoted.send(ctx, []*client.Party{c.partyOf(1)}, reports[first:2*first], nil)
	if viaDemoted.failed != 0 {
		t.Fatalf("%d of %d uploads to the demoted leader1 failed: %v", viaDemoted.failed, first, viaDemoted.err)
	}
	acked := union(up.acked, viaDemoted.acked)
	e := c.releaseRetrying(t)
	if want := prefixCounts(acked, bins); e.N != int64(len(acked)) || !slices.Equal(e.Counts, want) {
		t.Fatalf("release through leader2: %d reports, counts %v; want %d, %v", e.N, e.Counts, len(acked), want)
	}
	select {
	case <-c.procs["leader1"].exited:
		t.Fatalf("leader1 exited after losing its coordination: %v", c.procs["leader1"].err)
	default:
	}

	c.kill("leader2")
	c.waitLog("leader1", c.procs["leader1"], func(log string) bool { return strings.Count(log, "msg=serving") >= 2 })
	again := newUploads()
	again.send(ctx, []*client.Party{c.partyOf(1)}, reports[2*first:], nil)
	if again.failed != 0 {
		t.Fatalf("%d of %d uploads to leader1, coordinating again, failed: %v", again.failed, n-2*first, again.err)
	}
	acked = union(acked, again.acked)
	e = c.releaseRetrying(t)
	for _, name := range []string{"leader1", "helper1", "helper2"} {
		c.kill(name)
	}
	atBoth := c.checkStored(acked, e, bins)
	if len(atBoth) != n {
		t.Errorf("%d reports stored at both servers, want all %d acknowledged", len(atBoth), n)
	}
	if releases := ledgerReleases(t, dsn, c.m.Dataset); releases != 2 {
		t.Errorf("the leader's ledger holds %d releases, want 2", releases)
	}
}

// releaseRetrying is release, retried every half second while a
// take-over may be under way; the minute allowed is a hang guard, not a
// threshold (a take-over under load may take longer than the 10 s it
// used to be given).
func (c *processCluster) releaseRetrying(t *testing.T) *analyst.ECDF {
	t.Helper()
	e, err := c.release()
	for deadline := time.Now().Add(time.Minute); err != nil && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
		e, err = c.release()
	}
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	return e
}

// union is the set of the reports of a and b.
func union(a, b map[payload.ReportID]bool) map[payload.ReportID]bool {
	u := make(map[payload.ReportID]bool, len(a)+len(b))
	for _, m := range []map[payload.ReportID]bool{a, b} {
		for id := range m {
			u[id] = true
		}
	}
	return u
}

// signal sends the process name sig.
func (c *crashCluster) signal(name string, sig syscall.Signal) {
	c.t.Helper()
	if err := c.procs[name].cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("sending %v to %s: %v", sig, name, err)
	}
}
