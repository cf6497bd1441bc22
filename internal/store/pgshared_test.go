package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// openShared opens a process of a role on dsn, closed when t ends.
func openShared(t *testing.T, dsn string) *Postgres {
	t.Helper()
	p, err := OpenPostgresShared(dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// after returns the reports ReportsAfter(cursor) reads, and its next
// cursor.
func after(t *testing.T, p *Postgres, cursor uint64) ([]payload.ReportID, uint64) {
	t.Helper()
	var ids []payload.ReportID
	next, err := p.ReportsAfter("d", cursor, func(id payload.ReportID, _ []byte) error {
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, next
}

// TestSharedProcessesOneCoordinator: of two processes opened on one
// database the first coordinates and the second stands by; the
// standby's uploads are the coordinator's to read, once each however
// often both write them; the standby cannot take over while the
// coordinator runs, and takes over once it is closed.
func TestSharedProcessesOneCoordinator(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := openShared(t, dsn)
	b := openShared(t, dsn)
	if !a.Coordinating() || b.Coordinating() {
		t.Fatalf("coordinating: first %v, second %v; want true, false", a.Coordinating(), b.Coordinating())
	}
	if _, err := OpenPostgres(dsn, ""); !errors.Is(err, ErrLocked) {
		t.Fatalf("a single-process open beside a coordinator: %v, want ErrLocked", err)
	}
	for _, p := range []*Postgres{b, a, b} {
		if err := p.PutReport("d", reportID(1), []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PutReport("d", reportID(2), []byte{2}); err != nil {
		t.Fatal(err)
	}
	ids, cursor := after(t, a, 0)
	if want := []payload.ReportID{reportID(1), reportID(2)}; !slices.Equal(ids, want) {
		t.Fatalf("the coordinator reads %v, want %v", ids, want)
	}
	// The cursor passes these reports once no transaction older than
	// them runs anywhere on the cluster (other packages' tests share
	// it): read on until it does, seeing nothing but these meanwhile.
	for again, deadline := ids, time.Now().Add(time.Minute); len(again) != 0; again, cursor = after(t, a, cursor) {
		if extra := slices.DeleteFunc(slices.Clone(again), func(id payload.ReportID) bool { return slices.Contains(ids, id) }); len(extra) != 0 {
			t.Fatalf("read again after the cursor: %v, not among %v", again, ids)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still reading %v again a minute on: the cursor does not move past them", again)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if took, err := b.TakeOver(); took || err != nil {
		t.Fatalf("standby takes over beside a running coordinator: %v, %v", took, err)
	}
	a.Close()
	// The lock goes when the closed session's backend has exited.
	took, err := b.TakeOver()
	for deadline := time.Now().Add(10 * time.Second); !took && err == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		took, err = b.TakeOver()
	}
	if !took || err != nil || !b.Coordinating() {
		t.Fatalf("standby takes over after the coordinator closed: %v, %v", took, err)
	}
	if err := b.PutReport("d", reportID(3), []byte{3}); err != nil {
		t.Fatalf("writing as the new coordinator: %v", err)
	}
}

// TestReportsAfterSeesLateCommits: a report inserted by a transaction
// that began before another report's and commits after it was read is
// still read at the next call, though its sequence number is the
// smaller (a cursor over sequence numbers would skip it for ever).
func TestReportsAfterSeesLateCommits(t *testing.T) {
	dsn := pgtest.Schema(t)
	p := openShared(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	slow, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	late := reportID(9)
	rec := reportRecord("d", late, time.Now(), []byte{9})
	if _, err := slow.Exec(ctx, `INSERT INTO fedecdf_reports (dataset, id, rec) VALUES ('d', $1, $2)`, late[:], rec); err != nil {
		t.Fatal(err)
	}
	if err := p.PutReport("d", reportID(1), []byte{1}); err != nil {
		t.Fatal(err)
	}
	ids, cursor := after(t, p, 0)
	if !slices.Equal(ids, []payload.ReportID{reportID(1)}) {
		t.Fatalf("read before the slow transaction commits: %v, want report 1 only", ids)
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ids, _ = after(t, p, cursor)
	if !slices.Contains(ids, late) {
		t.Fatalf("read after the slow transaction committed: %v, want it to hold %v", ids, late)
	}
}

// TestCoordinatorLosesLock: a coordinator whose writing connection ends
// while a standby takes over writes nothing more (ErrLocked, and Lost
// is closed), so two processes never both coordinate.
func TestCoordinatorLosesLock(t *testing.T) {
	a, b := cutAndTakeOver(t)
	var err error
	for try := 0; try < 2 && !errors.Is(err, ErrLocked); try++ {
		err = a.PutReport("d", reportID(1), []byte{1})
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("the former coordinator's write: %v, want ErrLocked", err)
	}
	select {
	case <-a.Lost():
	default:
		t.Fatal("Lost not closed after the former coordinator found the lock taken")
	}
	if err := a.Hold(); !errors.Is(err, ErrLocked) {
		t.Errorf("Hold of the former coordinator: %v, want ErrLocked", err)
	}
	if err := b.Hold(); err != nil {
		t.Errorf("Hold of the new coordinator: %v", err)
	}
	if n, err := b.NumReports("d"); n != 0 || err != nil {
		t.Fatalf("%d reports stored (%v) by a coordinator that lost its lock", n, err)
	}
}

// cutAndTakeOver opens a coordinator a and a standby b on a new schema,
// ends a's writing connection and has b take over.
func cutAndTakeOver(t *testing.T) (a, b *Postgres) {
	t.Helper()
	dsn := pgtest.Schema(t)
	a, b = openShared(t, dsn), openShared(t, dsn)
	a.wmu.Lock()
	pid := a.conn.PgConn().PID()
	a.wmu.Unlock()
	withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
		if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend($1, 10000)`, pid); err != nil {
			t.Fatal(err)
		}
	})
	took, err := b.TakeOver()
	for deadline := time.Now().Add(10 * time.Second); !took && err == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		took, err = b.TakeOver()
	}
	if !took || err != nil {
		t.Fatalf("standby takes over after the coordinator's connection ended: %v, %v", took, err)
	}
	return a, b
}

// TestDemoteAfterLostLock: a coordinator that lost its lock, demoted,
// is a standby again: Lost is a new channel, open; it records uploads
// without the lock, does not take the lock while the new coordinator
// holds it, and takes it once that one closes.
func TestDemoteAfterLostLock(t *testing.T) {
	a, b := cutAndTakeOver(t)
	if err := a.Hold(); !errors.Is(err, ErrLocked) {
		t.Fatalf("Hold of the former coordinator: %v, want ErrLocked", err)
	}
	a.Demote()
	select {
	case <-a.Lost():
		t.Fatal("Lost closed after Demote")
	default:
	}
	if a.Coordinating() {
		t.Fatal("a demoted store coordinates")
	}
	if err := a.PutReport("d", reportID(2), []byte{2}); err != nil {
		t.Fatalf("the demoted standby records an upload: %v", err)
	}
	if took, err := a.TakeOver(); took || err != nil {
		t.Fatalf("the demoted standby's TakeOver while another coordinates: %v, %v; want false, nil", took, err)
	}
	if n, err := b.NumReports("d"); n != 1 || err != nil {
		t.Fatalf("the coordinator reads %d reports (%v), want the demoted standby's 1", n, err)
	}
	b.Close()
	took, err := a.TakeOver()
	for deadline := time.Now().Add(10 * time.Second); !took && err == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		took, err = a.TakeOver()
	}
	if !took || err != nil {
		t.Fatalf("the demoted standby takes over after the coordinator closed: %v, %v", took, err)
	}
	if err := a.Hold(); err != nil {
		t.Errorf("Hold of the coordinator again: %v", err)
	}
}

// TestMigrationToSharedSchema: a database of schema version 1 (one
// process per role) is brought to the current version at open, and the
// reports it held are read by the coordinator's first ReportsAfter.
func TestMigrationToSharedSchema(t *testing.T) {
	dsn := pgtest.Schema(t)
	id := reportID(4)
	withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
		if err := migrateLocked(ctx, conn, migrations[:1]); err != nil {
			t.Fatal(err)
		}
		rec := reportRecord("d", id, time.Now(), []byte{4})
		if _, err := conn.Exec(ctx, `INSERT INTO fedecdf_reports (dataset, id, rec) VALUES ('d', $1, $2)`, id[:], rec); err != nil {
			t.Fatal(err)
		}
	})
	p := openShared(t, dsn)
	if v := schemaVersion(t, dsn); v != SchemaVersion {
		t.Fatalf("schema version %d after opening, want %d", v, SchemaVersion)
	}
	if ids, _ := after(t, p, 0); !slices.Equal(ids, []payload.ReportID{id}) {
		t.Fatalf("reports of the version-1 database read: %v, want %v", ids, id)
	}
}

// TestHoldNoticesLostLock: a coordinator with nothing to write learns
// through Hold that its connection ended and a standby took the lock
// (ErrLocked, Lost closed); a coordinator whose connection ended while
// no one took the lock takes it back.
func TestHoldNoticesLostLock(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := openShared(t, dsn)
	terminate := func(p *Postgres) {
		p.wmu.Lock()
		pid := p.conn.PgConn().PID()
		p.wmu.Unlock()
		withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
			if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend($1, 10000)`, pid); err != nil {
				t.Fatal(err)
			}
		})
	}
	terminate(a)
	if err := a.Hold(); err != nil || !a.Coordinating() {
		t.Fatalf("Hold after the connection ended, no standby: %v", err)
	}
	b := openShared(t, dsn)
	if b.Coordinating() {
		t.Fatal("a second process coordinates after the first took its lock back")
	}
	terminate(a)
	if took, err := b.TakeOver(); !took || err != nil {
		t.Fatalf("standby takes over: %v, %v", took, err)
	}
	if err := a.Hold(); !errors.Is(err, ErrLocked) {
		t.Fatalf("Hold after a standby took over: %v, want ErrLocked", err)
	}
	select {
	case <-a.Lost():
	default:
		t.Fatal("Lost not closed")
	}
}
