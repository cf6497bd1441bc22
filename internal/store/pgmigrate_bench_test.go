package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/server"
)

// migrationBins is the grid of BenchmarkSchema3Migration's reports.
const migrationBins = 1024

// BenchmarkSchema3Migration measures the migration 3 → 4 of a
// verified dcf dataset's leader store at 10 000, 100 000 and 400 000
// reports of 1024 bins (TestSchema3PreparationsPreparedAnew is its
// known answer):
// a schema-3 database whose reports were all prepared (the sketches and
// folds server.Preparer makes, recorded as schema 3 did: no upload
// digest) is opened (migrate_s: the open, less reopen_s, an open of the
// migrated store), and its reports are prepared again as one process's
// preparation loop does (internal/deploy's: PrepareNext, batches of 256,
// until the queue is empty; reprepare_s). fresh_prepare_s is that loop
// on a fresh schema-4 store holding the same reports, all queued, in the
// same run. A probe records a report of another dataset every
// millisecond or so, one transaction each, as a group commit does: its
// slowest write during the fresh preparation, the migration and the
// re-preparation shows whether uploads stall. Last, purged reports are
// deleted (purge_ms/report). Skipped without
// FEDECDF_TEST_POSTGRES; go test -bench Schema3Migration -benchtime 1x.
func BenchmarkSchema3Migration(b *testing.B) {
	pgtest.BaseDSN(b) // skipped before the reports are made
	for _, n := range []int{10_000, 100_000, 400_000} {
		b.Run(fmt.Sprintf("reports=%d", n), func(b *testing.B) {
			ids, uploads := migrationReports(b, n)
			var key [verify.KeySize]byte
			rand.Read(key[:])
			prep, err := server.NewPreparer(server.Dataset{Name: "d", Backend: server.DCF, Bins: migrationBins}, server.Leader, key)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				measureMigration(b, ids, uploads, prep.Prepare)
			}
		})
	}
}

// migrationReports returns n leader uploads of verified dcf reports of
// dataset d at migrationBins, encoded as stored, with their IDs.
func migrationReports(b *testing.B, n int) ([]payload.ReportID, [][]byte) {
	s, err := vdcf.New(migrationBins)
	if err != nil {
		b.Fatal(err)
	}
	ids, uploads := make([]payload.ReportID, n), make([][]byte, n)
	for i := range n {
		ids[i] = wideID(i)
		r, err := s.EncodeAt(ids[i], i%migrationBins, i%3 == 0, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		uploads[i] = protocol.Encode(&protocol.Upload{Dataset: "d", Report: ids[i], Share: r.Shares[0]})
	}
	return ids, uploads
}

// measureMigration runs one measurement of BenchmarkSchema3Migration
// and reports its figures.
func measureMigration(b *testing.B, ids []payload.ReportID, uploads [][]byte, prepare Prepare) {
	fresh, old := pgtest.Schema(b), pgtest.Schema(b)
	probe := startProbe(b)
	defer probe.stop()

	// A fresh schema-4 store holding every report, all queued.
	p, err := OpenPostgresShared(fresh, "")
	if err != nil {
		b.Fatal(err)
	}
	withConn(b, fresh, func(ctx context.Context, conn *pgx.Conn) { insertReports(ctx, b, conn, ids, uploads) })
	vacuum(b, fresh)
	probe.on(fresh, "fresh")
	freshPrepare := timed(func() { prepareQueued(b, p, len(ids), prepare) })
	probe.off()
	p.Close()

	// The schema-3 store of the same reports, all prepared as schema 3
	// left them.
	withConn(b, old, func(ctx context.Context, conn *pgx.Conn) {
		if err := migrateLocked(ctx, conn, migrations[:3]); err != nil {
			b.Fatal(err)
		}
		insertReports(ctx, b, conn, ids, uploads)
		prepareSchema3(ctx, b, conn, ids, uploads, prepare)
	})
	vacuum(b, old)
	probe.on(old, "migration")
	var q *Postgres
	open := timed(func() {
		if q, err = OpenPostgresShared(old, ""); err != nil {
			b.Fatal(err)
		}
	})
	probe.off()
	q.Close()
	reopen := timed(func() {
		if q, err = OpenPostgresShared(old, ""); err != nil {
			b.Fatal(err)
		}
	})
	probe.on(old, "re-preparation")
	reprepare := timed(func() { prepareQueued(b, q, len(ids), prepare) })
	probe.off()
	q.Close()
	purge := timed(func() { deleteSpread(b, old, ids, purged) })

	b.ReportMetric(freshPrepare.Seconds(), "fresh_prepare_s")
	b.ReportMetric((open - reopen).Seconds(), "migrate_s")
	b.ReportMetric(reopen.Seconds(), "reopen_s")
	b.ReportMetric(reprepare.Seconds(), "reprepare_s")
	b.ReportMetric(reprepare.Seconds()/freshPrepare.Seconds(), "reprepare/fresh")
	b.ReportMetric(purge.Seconds()*1000/purged, "purge_ms/report")
	for _, phase := range []string{"fresh", "migration", "re-preparation"} {
		b.ReportMetric(probe.slowest[phase].Seconds()*1000, "probe_max_ms_"+phase)
	}
}

// purged is how many reports measureMigration deletes at the end, each
// of another fold: a purge's cost per report (the trigger
// fedecdf_unprepare takes the report's fold apart).
const purged = 20

// deleteSpread deletes k of the reports ids of dataset d, spread evenly
// over them, in one transaction, as a purge does.
func deleteSpread(b *testing.B, dsn string, ids []payload.ReportID, k int) {
	gone := make([][]byte, k)
	for i := range gone {
		gone[i] = ids[i*len(ids)/k][:]
	}
	withConn(b, dsn, func(ctx context.Context, conn *pgx.Conn) {
		if _, err := conn.Exec(ctx, `DELETE FROM fedecdf_reports WHERE dataset = 'd' AND id = ANY($1)`, gone); err != nil {
			b.Fatal(err)
		}
	})
}

// timed returns how long fn took.
func timed(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}

// vacuum vacuums and analyzes the tables of dsn's schema, as
// autovacuum would have a store long in use.
func vacuum(b *testing.B, dsn string) {
	withConn(b, dsn, func(ctx context.Context, conn *pgx.Conn) {
		if _, err := conn.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
	})
}

// insertReports records the reports of dataset d, 1000 per transaction,
// as the group commit does.
func insertReports(ctx context.Context, b *testing.B, conn *pgx.Conn, ids []payload.ReportID, uploads [][]byte) {
	for start := 0; start < len(ids); start += 1000 {
		var r rows
		for i := start; i < min(start+1000, len(ids)); i++ {
			r.add("d", ids[i], reportRecord("d", ids[i], time.Unix(1, 0), uploads[i]))
		}
		if _, err := conn.Exec(ctx, `INSERT INTO fedecdf_reports (dataset, id, rec) SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[])`,
			r.datasets, r.ids, r.recs); err != nil {
			b.Fatal(err)
		}
	}
}

// prepareSchema3 prepares the reports of dataset d in batches of 256
// and records each batch as a schema-3 process did: its fold, each
// report's sketch and fold (no upload digest), the queue emptied.
func prepareSchema3(ctx context.Context, b *testing.B, conn *pgx.Conn, ids []payload.ReportID, uploads [][]byte, prepare Prepare) {
	for start := 0; start < len(ids); start += 256 {
		end := min(start+256, len(ids))
		sketches, fold, err := prepare(ids[start:end], uploads[start:end])
		if err != nil {
			b.Fatal(err)
		}
		keys := make([][]byte, end-start)
		for i := range keys {
			keys[i] = ids[start+i][:]
		}
		if _, err := conn.Exec(ctx, `WITH f AS (INSERT INTO fedecdf_folds (dataset, reports, agg) VALUES ('d', $1, $2) RETURNING seq)
			INSERT INTO fedecdf_prepared SELECT 'd', i, s, f.seq FROM f, unnest($3::bytea[], $4::bytea[]) AS u(i, s)`,
			end-start, fold, keys, sketches); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `DELETE FROM fedecdf_prepare_queue WHERE dataset = 'd'`); err != nil {
		b.Fatal(err)
	}
}

// prepareQueued runs one process's preparation loop until the queue of
// dataset d is empty, and checks that the folds hold every report.
func prepareQueued(b *testing.B, p *Postgres, n int, prepare Prepare) {
	prepareWith(b, p, 256, prepare)
	if _, folded, err := p.Folds("d"); err != nil || len(folded) != n {
		b.Fatalf("after the preparation: %d reports folded (%v), want %d", len(folded), err, n)
	}
}

// probe records reports of dataset u, one per transaction, while on,
// and keeps the slowest write of each phase.
type probe struct {
	mu      sync.Mutex
	phase   string
	dsn     string
	slowest map[string]time.Duration
	next    atomic.Uint32
	done    chan struct{}
	wg      sync.WaitGroup
	b       *testing.B
}

// startProbe starts a probe, off.
func startProbe(b *testing.B) *probe {
	pr := &probe{slowest: map[string]time.Duration{}, done: make(chan struct{}), b: b}
	pr.wg.Go(pr.run)
	return pr
}

// on starts probing the database of dsn for phase, off stops it.
func (pr *probe) on(dsn, phase string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.dsn, pr.phase = dsn, phase
}

func (pr *probe) off() { pr.on("", "") }

func (pr *probe) stop() {
	close(pr.done)
	pr.wg.Wait()
}

// run writes one report at a time while a phase is on.
func (pr *probe) run() {
	ctx := context.Background()
	var conn *pgx.Conn
	var dsn string
	defer func() {
		if conn != nil {
			conn.Close(ctx)
		}
	}()
	for {
		select {
		case <-pr.done:
			return
		case <-time.After(time.Millisecond):
		}
		pr.mu.Lock()
		phase, want := pr.phase, pr.dsn
		pr.mu.Unlock()
		if phase == "" {
			continue
		}
		if want != dsn {
			if conn != nil {
				conn.Close(ctx)
			}
			var err error
			if conn, err = pgx.Connect(ctx, want); err != nil {
				pr.b.Error(err)
				return
			}
			dsn = want
		}
		id := wideID(int(pr.next.Add(1)))
		start := time.Now()
		if _, err := conn.Exec(ctx, `INSERT INTO fedecdf_reports (dataset, id, rec) VALUES ('u', $1, $2)`, id[:], reportRecord("u", id, start, []byte{1})); err != nil {
			pr.b.Error(err)
			return
		}
		took := time.Since(start)
		pr.mu.Lock()
		if pr.phase == phase {
			pr.slowest[phase] = max(pr.slowest[phase], took)
		}
		pr.mu.Unlock()
	}
}
