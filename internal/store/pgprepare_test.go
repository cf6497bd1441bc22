package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// wideID is report i's ID, for i beyond a byte.
func wideID(i int) payload.ReportID {
	var id payload.ReportID
	binary.BigEndian.PutUint32(id[:], uint32(i))
	id[15] = 0xbb
	return id
}

// countingPrepare is a Prepare that sketches each report as its upload,
// except those whose upload is {0} (not decoding: no sketch), and folds
// the number of reports sketched (8 bytes), counting in seen how often
// each report was prepared.
func countingPrepare(mu *sync.Mutex, seen map[payload.ReportID]int) Prepare {
	return func(ids []payload.ReportID, uploads [][]byte) ([][]byte, []byte, error) {
		mu.Lock()
		defer mu.Unlock()
		sketches := make([][]byte, len(ids))
		n := uint64(0)
		for i, id := range ids {
			seen[id]++
			if !bytes.Equal(uploads[i], []byte{0}) {
				sketches[i], n = uploads[i], n+1
			}
		}
		if n == 0 {
			return sketches, nil, nil
		}
		return sketches, binary.LittleEndian.AppendUint64(nil, n), nil
	}
}

// TestPrepareLeasesEachReportOnce: three processes of a role preparing
// at once, while reports are recorded, prepare every report exactly
// once, the one the coordinator recorded and the standbys' alike; the
// sketches and folds read back are theirs, and the folds hold exactly
// the reports sketched.
func TestPrepareLeasesEachReportOnce(t *testing.T) {
	dsn := pgtest.Schema(t)
	procs := []*Postgres{openShared(t, dsn), openShared(t, dsn), openShared(t, dsn)}
	const n = 600
	var mu sync.Mutex
	seen := map[payload.ReportID]int{}
	var wg sync.WaitGroup
	for k, p := range procs {
		wg.Go(func() {
			for i := k; i < n; i += len(procs) {
				upload := []byte{byte(i%7 + 1), byte(i)}
				if i%50 == 0 {
					upload = []byte{0}
				}
				if err := p.PutReport("d", wideID(i), upload); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Go(func() {
			for idle := 0; idle < 20; {
				got, err := p.PrepareNext("d", 32, countingPrepare(&mu, seen))
				if err != nil {
					t.Error(err)
					return
				}
				if got == 0 {
					idle++
				}
			}
		})
	}
	wg.Wait()
	for {
		got, err := procs[0].PrepareNext("d", 64, countingPrepare(&mu, seen))
		if err != nil {
			t.Fatal(err)
		}
		if got == 0 {
			break
		}
	}
	if len(seen) != n {
		t.Fatalf("%d reports prepared, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("report %v prepared %d times", id, c)
		}
	}
	ids := make([]payload.ReportID, n)
	for i := range ids {
		ids[i] = wideID(i)
	}
	sk, skDigests, err := procs[1].Sketches("d", ids)
	if err != nil {
		t.Fatal(err)
	}
	folds, folded, err := procs[2].Folds("d")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(skDigests, folded) {
		t.Fatalf("the sketches' upload digests (%d) are not the folds' (%d)", len(skDigests), len(folded))
	}
	total := uint64(0)
	for _, f := range folds {
		total += binary.LittleEndian.Uint64(f)
	}
	want := slices.SortedFunc(maps.Keys(sk), payload.CompareIDs)
	foldedIDs := slices.SortedFunc(maps.Keys(folded), payload.CompareIDs)
	if len(sk) != n-n/50 || !slices.Equal(foldedIDs, want) || total != uint64(len(folded)) {
		t.Fatalf("%d sketches, %d reports folded (the sketched ones: %v), folds counting %d; want %d", len(sk), len(folded), slices.Equal(foldedIDs, want), total, n-n/50)
	}
	for i, id := range ids {
		if s, ok := sk[id]; ok && !bytes.Equal(s, []byte{byte(i%7 + 1), byte(i)}) {
			t.Fatalf("report %d's sketch %v is not its own", i, s)
		}
	}
}

// TestKilledLeaseIsTakenAgain: a process whose session ends while it
// holds a lease (as when it is SIGKILLed: PostgreSQL ends its backend's
// transaction) records nothing, and its reports are leased again by
// another process, and prepared once.
func TestKilledLeaseIsTakenAgain(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := openShared(t, dsn), openShared(t, dsn)
	for i := range 10 {
		if err := a.PutReport("d", wideID(i), []byte{byte(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[payload.ReportID]int{}
	inner := countingPrepare(&mu, seen)
	got, err := b.PrepareNext("d", 4, func(ids []payload.ReportID, uploads [][]byte) ([][]byte, []byte, error) {
		// The lease's session ends: every backend holding a lock on a
		// queued report but this test's.
		pgtest.Exec(t, dsn, `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
			WHERE l.relation = 'fedecdf_prepare_queue'::regclass AND l.pid <> pg_backend_pid()`)
		return inner(ids, uploads)
	})
	if err == nil || got != 0 {
		t.Fatalf("PrepareNext whose session ended: %d, %v; want an error", got, err)
	}
	clear(seen)
	for {
		got, err := a.PrepareNext("d", 4, inner)
		if err != nil {
			t.Fatal(err)
		}
		if got == 0 {
			break
		}
	}
	folds, folded, err := a.Folds("d")
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 10 || len(folded) != 10 || len(folds) != 3 {
		t.Fatalf("after the killed lease: %d reports prepared, %d folded in %d folds; want 10, 10, 3", len(seen), len(folded), len(folds))
	}
}

// TestPrepareNowWaitsForLeases: a coordinator preparing reports itself
// (PrepareNow) waits for the process holding a lease on some of them,
// prepares only the others, and returns with every one prepared once.
func TestPrepareNowWaitsForLeases(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := openShared(t, dsn), openShared(t, dsn)
	ids := make([]payload.ReportID, 6)
	for i := range ids {
		ids[i] = wideID(i)
		if err := a.PutReport("d", ids[i], []byte{byte(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[payload.ReportID]int{}
	inner := countingPrepare(&mu, seen)
	leased, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := b.PrepareNext("d", 3, func(ids []payload.ReportID, uploads [][]byte) ([][]byte, []byte, error) {
			close(leased)
			<-release
			return inner(ids, uploads)
		}); err != nil {
			t.Error(err)
		}
	})
	<-leased
	done := make(chan error, 1)
	go func() { done <- a.PrepareNow("d", ids, inner) }()
	select {
	case err := <-done:
		t.Fatalf("PrepareNow returned (%v) while another process held a lease on 3 of its reports", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sk, _, err := a.Sketches("d", ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 6 || len(sk) != 6 {
		t.Fatalf("%d reports prepared, %d sketched; want 6, 6", len(seen), len(sk))
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("report %v prepared %d times", id, c)
		}
	}
}

// TestPreparedReportRecordedAgainIsPreparedAnew: a report prepared,
// deleted (an orphan purge, say) and recorded again is queued again and
// prepared anew, its content may differ (TestDeletedReportLeavesItsFold),
// and its lease does not fail on the old preparation.
func TestPreparedReportRecordedAgainIsPreparedAnew(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := openShared(t, dsn)
	if err := a.PutReport("d", wideID(1), []byte{1}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[payload.ReportID]int{}
	if n, err := a.PrepareNext("d", 8, countingPrepare(&mu, seen)); n != 1 || err != nil {
		t.Fatalf("PrepareNext: %d, %v; want 1", n, err)
	}
	if n, err := a.DeleteReports("d", []payload.ReportID{wideID(1)}); n != 1 || err != nil {
		t.Fatalf("DeleteReports: %d, %v", n, err)
	}
	if err := a.PutReport("d", wideID(1), []byte{1}); err != nil {
		t.Fatal(err)
	}
	if n, err := a.PrepareNext("d", 8, countingPrepare(&mu, seen)); n != 1 || err != nil || seen[wideID(1)] != 2 {
		t.Fatalf("PrepareNext after the report was recorded again: %d, %v, prepared %d times; want 1, nil, 2", n, err, seen[wideID(1)])
	}
}

// TestSchema3PreparationsPreparedAnew is the migration 3 → 4 of a
// database whose processes prepared reports before the folds kept what
// they folded: its sketches and folds, which hold no upload digest, are
// dropped and every report is queued again, so that each is prepared
// anew, once, and folded with the SHA-256 of its upload (a known answer:
// what server's foldedSums compares a read-back with).
func TestSchema3PreparationsPreparedAnew(t *testing.T) {
	dsn := pgtest.Schema(t)
	uploads := map[payload.ReportID][]byte{wideID(1): {1, 2}, wideID(2): {2, 2}, wideID(3): {3, 2}}
	withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
		if err := migrateLocked(ctx, conn, migrations[:3]); err != nil {
			t.Fatal(err)
		}
		for id, up := range uploads {
			if _, err := conn.Exec(ctx, `INSERT INTO fedecdf_reports (dataset, id, rec) VALUES ('d', $1, $2)`,
				id[:], reportRecord("d", id, time.Unix(1, 0), up)); err != nil {
				t.Fatal(err)
			}
		}
		// Reports 1 and 2 prepared by a fedecdf of schema 3, 3 still queued.
		one, two := wideID(1), wideID(2)
		if _, err := conn.Exec(ctx, `WITH f AS (INSERT INTO fedecdf_folds (dataset, reports, agg) VALUES ('d', 2, '\x02') RETURNING seq)
			INSERT INTO fedecdf_prepared SELECT 'd', i, i, f.seq FROM f, unnest($1::bytea[]) AS i`, [][]byte{one[:], two[:]}); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `DELETE FROM fedecdf_prepare_queue WHERE id = ANY($1)`, [][]byte{one[:], two[:]}); err != nil {
			t.Fatal(err)
		}
	})
	p := openShared(t, dsn)
	if v := schemaVersion(t, dsn); v != 4 || SchemaVersion != 4 {
		t.Fatalf("migrated to schema version %d (SchemaVersion %d), want 4", v, SchemaVersion)
	}
	if folds, folded, err := p.Folds("d"); err != nil || len(folds)+len(folded) != 0 {
		t.Fatalf("after the migration: %d folds of %d reports (%v), want none: schema 3's hold no digest", len(folds), len(folded), err)
	}
	var mu sync.Mutex
	seen := map[payload.ReportID]int{}
	if n, err := p.PrepareNext("d", 8, countingPrepare(&mu, seen)); n != 3 || err != nil {
		t.Fatalf("PrepareNext after the migration: %d, %v; want all 3 reports", n, err)
	}
	_, folded, err := p.Folds("d")
	if err != nil {
		t.Fatal(err)
	}
	const kat = "a12871fee210fb8619291eaea194581cbd2531e4b23759d225f6806923f63222" // SHA-256 of 01 02
	if got := folded[wideID(1)]; hex.EncodeToString(got[:]) != kat {
		t.Errorf("report 1's upload 01 02 folded with the digest %x, want %s", got, kat)
	}
	for id, up := range uploads {
		if seen[id] != 1 || folded[id] != sha256.Sum256(up) {
			t.Errorf("report %v prepared %d times, folded with the digest %x; want once, that of its upload %x", id, seen[id], folded[id], up)
		}
	}
}
