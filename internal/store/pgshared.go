package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// Several processes of one role share a database: one coordinates (its
// writing connection holds the schema's advisory lock, as the only
// process of OpenPostgres does), the others stand by. A standby records
// the uploads it receives (PutReport: the unique index on (dataset, id)
// keeps one of each, whichever process wrote it first) and nothing
// else; the coordinator reads them with ReportsAfter, and a standby
// takes the coordinator's place with TakeOver once the lock is free
// (the coordinator's session ended: it stopped, was killed, or lost its
// connection).

// OpenPostgresShared is OpenPostgres for one of several processes of a
// role: on a database whose lock another process holds it opens a
// standby (Coordinating false) instead of refusing it.
func OpenPostgresShared(dsn, passwordFile string) (*Postgres, error) {
	return openPostgres(dsn, passwordFile, true)
}

// Coordinating reports whether p's writing connection holds the
// database's lock (false: a standby).
func (p *Postgres) Coordinating() bool {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return !p.standby
}

// TakeOver tries to make a standby the coordinator: it takes the
// database's lock on a new writing connection if no other process holds
// it, and reports whether p coordinates. The caller must then load
// everything the coordinator keeps (ledger, releases, verdicts, reports)
// from the database, none of which a standby read.
func (p *Postgres) TakeOver() (bool, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if !p.standby {
		return true, nil
	}
	ctx, cancel := readCtx()
	defer cancel()
	if p.conn == nil || p.conn.IsClosed() {
		conn, err := p.connect(ctx)
		if err != nil {
			return false, err
		}
		p.conn = conn
	}
	// The standby's writing connection takes the lock itself: no new
	// connection (a new PostgreSQL backend) per try.
	var got bool
	if err := p.conn.QueryRow(ctx, tryLockSQL).Scan(&got); err != nil {
		if p.conn.IsClosed() {
			p.conn = nil
		}
		return false, fmt.Errorf("store: %s: %w", p.name, err)
	}
	p.standby = !got
	return got, nil
}

// Lost is closed when the coordinator's writing connection, reconnected
// (after the database restarted, say), finds the lock held by another
// process, which took over meanwhile: p then writes nothing (ErrLocked)
// and its process must stop coordinating.
func (p *Postgres) Lost() <-chan struct{} {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.lost
}

// Demote makes p, a coordinator that lost the lock (Lost closed), a
// standby again: its writing connection, reconnected without the lock,
// records uploads (and its process must write nothing else: it no
// longer coordinates) until TakeOver takes the lock again, and Lost
// returns a new channel.
func (p *Postgres) Demote() {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.conn != nil {
		ctx, cancel := readCtx()
		p.conn.Close(ctx)
		cancel()
		p.conn = nil
	}
	p.standby = true
	p.lost, p.lostOnce = make(chan struct{}), sync.Once{}
}

// ReportsAfter calls fn with each recorded upload of dataset that a
// transaction with ID cursor or later inserted, in the order recorded,
// and returns the cursor of the next call: the oldest transaction still
// running when these were read. Every report committed later was
// inserted by a transaction not older than that, so a coordinator
// calling ReportsAfter again with the cursor returned sees every report
// any process records, some more than once (cursor 0: all of them).
// Sequence numbers would not do: a transaction committing after another
// may hold the smaller ones.
func (p *Postgres) ReportsAfter(dataset string, cursor uint64, fn func(id payload.ReportID, upload []byte) error) (uint64, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next := cursor
	err := pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var xmin string
		if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&xmin); err != nil {
			return err
		}
		n, err := strconv.ParseUint(xmin, 10, 64)
		if err != nil {
			return fmt.Errorf("the snapshot's oldest transaction %q: %w", xmin, err)
		}
		rs, err := tx.Query(ctx, `SELECT seq, rec FROM fedecdf_reports WHERE dataset = $1 AND xid >= $2::text::xid8 ORDER BY seq`,
			dataset, strconv.FormatUint(cursor, 10))
		if err != nil {
			return err
		}
		var seq int64
		var rec []byte
		_, err = pgx.ForEachRow(rs, []any{&seq, &rec}, func() error {
			_, id, rest, err := p.parseRow(dataset, "report", seq, rec)
			if err != nil {
				return err
			}
			_, upload := parseReport(rest)
			return fn(id, upload)
		})
		if err == nil {
			next = n
		}
		return err
	})
	if err != nil {
		return cursor, fmt.Errorf("store: reading the reports of dataset %q recorded since transaction %d: %w", dataset, cursor, err)
	}
	return next, nil
}

// Hold checks that a coordinator's writing connection is alive and
// still holds the lock, reconnecting (and taking the lock again) if the
// connection ended: after the database restarted, the coordinator takes
// its lock back before a standby does, or finds it taken (ErrLocked, and
// Lost is closed) though it had nothing to write. Nothing for a standby.
func (p *Postgres) Hold() error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.standby {
		return nil
	}
	ctx, cancel := readCtx()
	defer cancel()
	if p.conn != nil && !p.conn.IsClosed() {
		if err := p.conn.Ping(ctx); err == nil {
			return nil
		}
		p.conn.Close(ctx)
	}
	p.conn = nil
	return p.reconnect(ctx)
}
