package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// TestProcessKilledHoldingALease runs two `fedecdf server` processes per
// role on PostgreSQL, each preparing (evaluating, sketching, folding)
// the role's reports from the database, and SIGKILLs the leader process
// that holds a lease on a batch of reports, while it records the
// batch's fold (the write hangs in the database): another process takes
// the batch again, every report is prepared and folded exactly once,
// and a release — through the leader process left, which took over if
// the killed one coordinated — counts every acknowledged report once,
// with the prefix counts of those reports (what one process per role
// releases).
func TestProcessKilledHoldingALease(t *testing.T) {
	const n = 120
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, n)
	dsn := c.stores["leader"]
	armFault(t, dsn, "fedecdf_folds", 1)
	parties := []*client.Party{c.partyOf(1), c.partyOf(2)}
	reports, bins := c.newReports(parties[0], n)
	up := newUploads()
	up.send(ctx, parties, reports, nil)
	if up.failed != 0 {
		t.Fatalf("%d of %d uploads failed", up.failed, n)
	}
	holder := `SELECT pid, application_name FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%fedecdf_folds%'`
	var name string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var pid int64
		if queryInt(t, dsn, `SELECT count(*) FROM (`+holder+`) h`) == 1 {
			pgtest.QueryRow(t, dsn, holder, &pid, &name)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader process is recording a fold 30 s after the uploads")
		}
	}
	leased := queryInt(t, dsn, `SELECT count(*) FROM fedecdf_prepare_queue`)
	c.kill(name)
	// The database notices a dead client only when it next reads from
	// it: end the hanging write as it would.
	queryInt(t, dsn, `SELECT count(pg_terminate_backend(pid)) FROM (`+holder+`) h`)
	other := "leader1"
	if name == other {
		other = "leader2"
		c.waitLog(other, c.procs[other], func(log string) bool { return strings.Contains(log, "msg=serving") })
	}
	for deadline := time.Now().Add(30 * time.Second); queryInt(t, dsn, `SELECT count(*) FROM fedecdf_prepare_queue`) != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after %s was killed holding a lease, reports are still queued", name)
		}
	}
	prepared := queryInt(t, dsn, `SELECT count(*) FROM fedecdf_prepared WHERE fold IS NOT NULL`)
	folded := queryInt(t, dsn, `SELECT coalesce(sum(reports), 0) FROM fedecdf_folds`)
	if prepared != n || folded != n {
		t.Errorf("after the killed lease: %d reports prepared and folded, the folds holding %d; want %d and %d", prepared, folded, n, n)
	}
	e, err := c.release()
	if err != nil {
		t.Fatalf("release through %s: %v", other, err)
	}
	if want := prefixCounts(up.acked, bins); e.N != n || !slices.Equal(e.Counts, want) {
		t.Errorf("release over %d reports, counts %v; want %d, %v (each acknowledged report once)", e.N, e.Counts, n, want)
	}
	t.Logf("%s killed holding a lease with %d reports queued; %s prepared them; release over %d", name, leased, other, e.N)
}
