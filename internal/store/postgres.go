package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// ErrSchema is wrapped by the error of OpenPostgres for a database whose
// schema version is newer than this fedecdf knows.
var ErrSchema = errors.New("store schema not supported")

// ErrPassword is wrapped by the refusal of a DSN holding a password.
var ErrPassword = errors.New("password in the store DSN")

var errPasswordForFile = errors.New("store: a password file is for a postgres:// store only, not a bbolt file")

// opTimeout bounds each statement and transaction of the PostgreSQL
// store, so that a write to an unreachable database fails (and is not
// acknowledged) instead of hanging; migrateTimeout bounds a schema
// migration, which rewrites rows of every report (≈ 14 µs per report
// from schema 3: half a minute at two million). Variables for the
// tests.
var (
	opTimeout      = 30 * time.Second
	migrateTimeout = 30 * time.Minute
)

// Postgres is a server's durable state in a PostgreSQL database (or a
// schema of one, chosen by the DSN's search_path): the tables of
// schema.go holding the same records as the bbolt Store. Reads use a
// connection pool; every write goes through one connection, in a
// transaction committed before the method returns. PutReport and
// SaveVerdicts share transactions (group commit, as Store). After the
// database restarts the next write reconnects; the writes meanwhile
// fail and are not acknowledged.
//
// The writing connection of the coordinating process holds the
// schema's advisory lock: one coordinator per database, as one process
// per bbolt file. OpenPostgres refuses a database whose lock another
// process holds (ErrLocked); OpenPostgresShared opens it as a standby
// instead, whose writing connection holds no lock (it records uploads
// only: pgshared.go) until TakeOver takes the lock.
type Postgres struct {
	pool *pgxpool.Pool
	cfg  *pgx.ConnConfig
	name string // the DSN, for errors (it holds no password)
	c    *committer

	// wmu serialises the writers on conn, the writing connection (nil:
	// reconnect before the next write), which holds the advisory lock
	// unless standby.
	wmu     sync.Mutex
	conn    *pgx.Conn
	standby bool
	// lost is closed when a coordinator's reconnection finds the lock
	// taken by another process (Lost).
	lost     chan struct{}
	lostOnce sync.Once
	// quarantined holds, per dataset, the reports set aside, read at
	// open (QuarantinePostgres runs with no process on the database).
	quarantined map[string]map[payload.ReportID]bool
}

// OpenPostgres connects to the database of dsn (a postgres:// URL
// holding no password: ErrPassword), takes its advisory lock (another
// server process holding it: ErrLocked), applies the schema migrations
// it lacks under a second advisory lock, and checks the schema version
// (ErrSchema) and the record format (ErrFormat). The password is read
// from passwordFile (mode 0600) if not empty, else from PGPASSWORD or
// ~/.pgpass as libpq does.
func OpenPostgres(dsn, passwordFile string) (*Postgres, error) {
	return openPostgres(dsn, passwordFile, false)
}

// openPostgres is OpenPostgres, or OpenPostgresShared if shared.
func openPostgres(dsn, passwordFile string, shared bool) (*Postgres, error) {
	if dsnHasPassword(dsn) {
		return nil, fmt.Errorf("store: %w: a command line is visible to every user of the machine", ErrPassword)
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if passwordFile != "" {
		pw, err := readPassword(passwordFile)
		if err != nil {
			return nil, err
		}
		pcfg.ConnConfig.Password = pw
	}
	// Every read pings the connection it is handed: after the database
	// restarted, a connection idle for less than pgxpool's default second
	// would otherwise fail the first read on it (a ledger check, say)
	// instead of being replaced.
	pcfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
	p := &Postgres{cfg: pcfg.ConnConfig, name: redact(dsn), lost: make(chan struct{})}
	if err := p.open(shared); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if p.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		p.conn.Close(ctx)
		return nil, fmt.Errorf("store: %s: %w", p.name, err)
	}
	if p.quarantined, err = p.loadQuarantine(ctx); err != nil {
		p.pool.Close()
		p.conn.Close(ctx)
		return nil, fmt.Errorf("store: %s: %w", p.name, err)
	}
	p.c = startCommitter(p.commitBatch)
	return p, nil
}

// open connects p's writing connection, with the database's lock (or,
// shared, without it if another process holds it: a standby), and
// migrates the database.
func (p *Postgres) open(shared bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := p.lockedConn(ctx); err != nil {
		if !shared || !errors.Is(err, ErrLocked) {
			return err
		}
		if p.conn, err = p.connect(ctx); err != nil {
			return err
		}
		p.standby = true
	}
	if err := p.migrate(); err != nil {
		p.conn.Close(ctx)
		return fmt.Errorf("store: %s: %w", p.name, err)
	}
	return nil
}

// dsnHasPassword reports whether dsn (a URL, or libpq's key=value form)
// holds a password.
func dsnHasPassword(dsn string) bool {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		_, set := u.User.Password()
		return set || u.Query().Has("password")
	}
	for _, f := range strings.Fields(dsn) {
		if strings.HasPrefix(f, "password=") {
			return true
		}
	}
	return false
}

// redact returns dsn without its query (which may name files and
// options the operator did not mean to log).
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		u.RawQuery = ""
		return u.String()
	}
	return "the PostgreSQL store"
}

// readPassword reads the password in path (its first line), refusing a
// file that group or others may access.
func readPassword(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("store: password file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("store: password file %s has mode %v: %w: make it readable by the server only (chmod 600 %s)", path, perm, ErrPermissions, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("store: password file: %w", err)
	}
	pw, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSuffix(pw, "\r"), nil
}

// tryLockSQL takes the advisory lock of the store's schema, the lock
// of its coordinating process, if no other session holds it.
const tryLockSQL = `SELECT pg_try_advisory_lock(hashtext('fedecdf store ' || current_schema()))`

// lockedConn connects p.conn and takes the advisory lock of the store's
// schema on it (wmu held, or during OpenPostgres). The session lock is
// the database's "file lock": released when the connection ends, taken
// again by the next write after a reconnection.
func (p *Postgres) lockedConn(ctx context.Context) error {
	conn, err := p.connect(ctx)
	if err != nil {
		return err
	}
	var got bool
	if err := conn.QueryRow(ctx, tryLockSQL).Scan(&got); err != nil {
		conn.Close(ctx)
		return fmt.Errorf("store: %s: %w", p.name, err)
	}
	if !got {
		conn.Close(ctx)
		return fmt.Errorf("store: %s: %w", p.name, ErrLocked)
	}
	p.conn = conn
	return nil
}

// connect opens a connection of p's configuration.
func (p *Postgres) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", p.name, err)
	}
	return conn, nil
}

// reconnect connects p.conn again (wmu held): a standby's without the
// lock, a coordinator's with it; a coordinator finding the lock taken
// has lost its role (Lost).
func (p *Postgres) reconnect(ctx context.Context) error {
	if p.standby {
		conn, err := p.connect(ctx)
		p.conn = conn
		return err
	}
	err := p.lockedConn(ctx)
	if errors.Is(err, ErrLocked) {
		p.lostOnce.Do(func() { close(p.lost) })
	}
	return err
}

// write runs fn in a transaction (of isolation iso) on the locked
// connection and commits it; it returns nil only once the commit
// returned. A connection found broken is dropped, and the next write
// reconnects. A serialisation failure is retried.
func (p *Postgres) write(iso pgx.TxIsoLevel, fn func(ctx context.Context, tx pgx.Tx) error) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	for attempt := 0; ; attempt++ {
		err := p.writeOnce(iso, fn)
		if attempt < 8 && isSerialisationFailure(err) {
			continue
		}
		return err
	}
}

func (p *Postgres) writeOnce(iso pgx.TxIsoLevel, fn func(ctx context.Context, tx pgx.Tx) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if p.conn == nil || p.conn.IsClosed() {
		p.conn = nil
		if err := p.reconnect(ctx); err != nil {
			return err
		}
	}
	err := pgx.BeginTxFunc(ctx, p.conn, pgx.TxOptions{IsoLevel: iso}, func(tx pgx.Tx) error { return fn(ctx, tx) })
	if err != nil && p.conn.IsClosed() {
		p.conn = nil
	}
	return err
}

// isSerialisationFailure reports whether err is PostgreSQL's
// serialization_failure (SQLSTATE 40001) or deadlock_detected (40P01).
func isSerialisationFailure(err error) bool {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		return pe.SQLState() == "40001" || pe.SQLState() == "40P01"
	}
	return false
}

// read returns a context bounding a read of the pool.
func readCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// Close commits the writes queued, refuses further ones (ErrClosed),
// releases the advisory lock and closes the connections.
func (p *Postgres) Close() error {
	p.c.stop()
	p.pool.Close()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.conn != nil {
		ctx, cancel := readCtx()
		defer cancel()
		err := p.conn.Close(ctx)
		p.conn = nil
		return err
	}
	return nil
}
