package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// TestConcurrentChargesAdmitOnlyTheBudget: releases charged at once,
// each of ε = 1 under a total of 3, are admitted exactly three times;
// the ledger holds those three and ε = 3.
func TestConcurrentChargesAdmitOnlyTheBudget(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		defer s.Close()
		const n = 12
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				errs[i] = s.Charge("d", payload.ReleaseID{byte(i)}, ledger.Budget{Epsilon: 1}, ledger.Budget{Epsilon: 3})
			})
		}
		wg.Wait()
		admitted := 0
		for i, err := range errs {
			charged, cerr := s.Charged("d", payload.ReleaseID{byte(i)})
			switch {
			case cerr != nil:
				t.Fatal(cerr)
			case err == nil && charged:
				admitted++
			case err == nil || charged || !errors.Is(err, ledger.ErrBudgetExhausted):
				t.Errorf("release %d: Charge %v, charged %v", i, err, charged)
			}
		}
		if spent, err := s.Spent("d"); admitted != 3 || spent.Epsilon != 3 || err != nil {
			t.Errorf("%d releases admitted, ε = %g spent (%v); want 3 and 3", admitted, spent.Epsilon, err)
		}
	})
}

// TestPostgresSchemaMigrations: a new database is created at
// SchemaVersion; a later fedecdf's migration is applied once, forward,
// on reopening; a database of a newer schema, or of another record
// format, is refused saying what to do.
func TestPostgresSchemaMigrations(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, err := OpenPostgres(dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutReport("d", reportID(1), []byte{1}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if v := schemaVersion(t, dsn); v != SchemaVersion {
		t.Fatalf("new database at schema version %d, want %d", v, SchemaVersion)
	}
	next := append(migrations[:len(migrations):len(migrations)], `ALTER TABLE fedecdf_reports ADD COLUMN note text`)
	withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
		for range 2 { // the second run finds nothing to do
			if err := migrateLocked(ctx, conn, next); err != nil {
				t.Fatal(err)
			}
		}
	})
	if v := schemaVersion(t, dsn); v != len(next) {
		t.Fatalf("after a migration: schema version %d, want %d", v, len(next))
	}
	s, err = OpenPostgres(dsn, "")
	if err == nil {
		s.Close()
		t.Fatal("a database of a newer schema was opened")
	}
	if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d", len(next))) {
		t.Errorf("newer schema: %v; want ErrSchema naming the version", err)
	}
	pgtest.Exec(t, dsn, `UPDATE fedecdf_schema SET version = `+strconv.Itoa(SchemaVersion)+`; UPDATE fedecdf_meta SET value = '\x63' WHERE key = 'format'`)
	s, err = OpenPostgres(dsn, "")
	if err == nil {
		s.Close()
		t.Fatal("a database of another record format was opened")
	}
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "format [99]") {
		t.Errorf("another format: %v; want ErrFormat naming the format", err)
	}
}

// TestMigrationOutlastsOpTimeout: a schema migration longer than the
// bound of one operation (opTimeout; a step sleeping past it stands for
// one rewriting millions of reports) completes on open, within
// migrateTimeout; past migrateTimeout the open fails, naming the step,
// and the database stays at its version.
func TestMigrationOutlastsOpTimeout(t *testing.T) {
	pgtest.BaseDSN(t)
	op, mig, steps := opTimeout, migrateTimeout, migrations
	t.Cleanup(func() { opTimeout, migrateTimeout, migrations = op, mig, steps })
	opTimeout = 100 * time.Millisecond
	migrations = append(steps[:len(steps):len(steps)], `SELECT pg_sleep(0.3)`)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		version int // after the open
	}{
		{"within migrateTimeout", time.Minute, len(steps) + 1},
		{"past migrateTimeout", 150 * time.Millisecond, len(steps)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			migrateTimeout = tc.timeout
			dsn := pgtest.Schema(t)
			withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
				if err := migrateLocked(ctx, conn, steps); err != nil {
					t.Fatal(err)
				}
			})
			s, err := OpenPostgres(dsn, "")
			if err == nil {
				s.Close()
			}
			want := fmt.Sprintf("schema migration to version %d", len(steps)+1)
			if done := tc.version > len(steps); done != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
				t.Errorf("open: %v; want success %v, else an error naming %q", err, done, want)
			}
			if v := schemaVersion(t, dsn); v != tc.version {
				t.Errorf("schema version %d after the open, want %d", v, tc.version)
			}
		})
	}
}

// schemaVersion reads the schema version of the database of dsn.
func schemaVersion(t *testing.T, dsn string) (v int) {
	withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
		if err := conn.QueryRow(ctx, `SELECT version FROM fedecdf_schema`).Scan(&v); err != nil {
			t.Fatal(err)
		}
	})
	return v
}

func withConn(t testing.TB, dsn string, fn func(ctx context.Context, conn *pgx.Conn)) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	fn(ctx, conn)
}

// TestPostgresPasswords: a DSN holding a password is refused before any
// connection (it would be on the command line), as is a password file
// others may read, or one given for a bbolt file.
func TestPostgresPasswords(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "pw")
	if err := os.WriteFile(open, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dsn, file string
		want            error
	}{
		{"URL user:password", "postgres://u:secret@localhost/db", "", ErrPassword},
		{"URL password parameter", "postgres://u@localhost/db?password=secret", "", ErrPassword},
		{"world-readable password file", "postgres://u@localhost/db", open, ErrPermissions},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := OpenBackend(c.dsn, c.file)
			if !errors.Is(err, c.want) {
				t.Fatalf("OpenBackend(%q, %q): %v, want %v", c.dsn, c.file, err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
	if !dsnHasPassword("host=/tmp user=u password=secret") {
		t.Error("a key=value DSN's password not found")
	}
	if _, err := OpenBackend(filepath.Join(dir, "s.db"), open); err == nil {
		t.Error("a password file accepted for a bbolt store")
	}
}

// TestPostgresSurvivesLostConnection: when the database ends the
// writer's connection, the write that needed it fails (it is not
// acknowledged), the next write reconnects and takes the advisory lock
// again, and nothing acknowledged is missing or doubled.
func TestPostgresSurvivesLostConnection(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, err := OpenPostgres(dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	acked := 0
	for i := range 3 {
		s.wmu.Lock()
		pid := s.conn.PgConn().PID()
		s.wmu.Unlock()
		withConn(t, dsn, func(ctx context.Context, conn *pgx.Conn) {
			if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
				t.Fatal(err)
			}
		})
		for try := 0; try < 2; try++ {
			if err := s.PutReport("d", reportID(byte(i)), []byte{byte(i)}); err == nil {
				acked++
				break
			} else if try == 1 {
				t.Fatalf("report %d after reconnecting: %v", i, err)
			}
		}
	}
	if n, err := s.NumReports("d"); n != acked || err != nil {
		t.Fatalf("%d reports stored (%v), %d acknowledged", n, err, acked)
	}
	if second, err := OpenPostgres(dsn, ""); !errors.Is(err, ErrLocked) {
		if err == nil {
			second.Close()
		}
		t.Fatalf("a second process after the reconnection: %v, want ErrLocked", err)
	}
}

// TestPostgresRefusesDamagedRecords: a report record too short to hold
// its report ID and receipt time, or one holding another report's ID
// than its row, is refused when read, naming the dataset and the
// damage, never decoded.
func TestPostgresRefusesDamagedRecords(t *testing.T) {
	for _, c := range []struct{ name, rec string }{
		{"short record", `'\x73686f7274'`},
		{"another report's ID", `'\x` + strings.Repeat("ab", 24) + `'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := pgtest.Schema(t)
			s, err := OpenPostgres(dsn, "")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id := reportID(1)
			pgtest.Exec(t, dsn, `INSERT INTO fedecdf_reports (dataset, id, rec) VALUES ('d', '\x`+hex.EncodeToString(id[:])+`', `+c.rec+`)`)
			errs := []error{
				s.Uploads("d", []payload.ReportID{id}, func(payload.ReportID, []byte) error { return nil }),
			}
			if c.name == "short record" {
				errs = append(errs, s.Reports("d", func(payload.ReportID, []byte) error { return nil }))
			}
			for _, err := range errs {
				for _, want := range []string{`dataset "d"`, "database " + redact(dsn), "table fedecdf_reports, row seq "} {
					if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "file") {
						t.Errorf("reading a damaged record: %v; want ErrDamaged naming %s, and no file", err, want)
					}
				}
			}
		})
	}
}
