package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// PutReport implements Backend: the report's record (reportRecord, the
// bbolt store's) is inserted in the group commit's transaction, the
// unique index on (dataset, id) keeping the first of a report's
// writes, and PutReport returns once that transaction committed (with
// PostgreSQL's synchronous_commit, once its WAL is flushed).
func (p *Postgres) PutReport(dataset string, id payload.ReportID, upload []byte) error {
	if p.Quarantined(dataset, id) {
		return fmt.Errorf("store: recording report %v of dataset %q: %w", id, dataset, ErrQuarantined)
	}
	if err := p.c.enqueue(&write{dataset: dataset, id: id, upload: upload, received: time.Now()}, func() bool { return false }); err != nil {
		return fmt.Errorf("store: recording report %v of dataset %q: %w", id, dataset, err)
	}
	return nil
}

// SaveVerdicts implements Backend, in the group commit as PutReport.
func (p *Postgres) SaveVerdicts(dataset string, records map[payload.ReportID][]byte) error {
	if len(records) == 0 {
		return nil
	}
	if err := p.c.enqueue(&write{dataset: dataset, verdicts: records}, func() bool { return false }); err != nil {
		return fmt.Errorf("store: recording %d verdicts of dataset %q: %w", len(records), dataset, err)
	}
	return nil
}

// rows are records to insert, as the columns of unnest.
type rows struct {
	datasets []string
	ids      [][]byte
	recs     [][]byte
}

func (r *rows) add(dataset string, id payload.ReportID, rec []byte) {
	r.datasets, r.ids, r.recs = append(r.datasets, dataset), append(r.ids, id[:]), append(r.recs, rec)
}

// commitBatch inserts batch in one transaction, in queue order, and
// answers each write. If the transaction fails and the connection
// survived, each write is retried alone, so that one bad write fails
// only itself; if the database is unreachable they all fail.
func (p *Postgres) commitBatch(batch []*write) {
	var reports, verdicts rows
	for _, w := range batch {
		if w.verdicts == nil {
			reports.add(w.dataset, w.id, reportRecord(w.dataset, w.id, w.received, w.upload))
			continue
		}
		for id, rec := range w.verdicts {
			verdicts.add(w.dataset, id, idRecord(w.dataset, id, rec))
		}
	}
	err := p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
		for _, t := range []struct {
			table  string
			r      rows
			unique string
		}{{"fedecdf_reports", reports, " ON CONFLICT (dataset, id) DO NOTHING"}, {"fedecdf_verdicts", verdicts, ""}} {
			if len(t.r.ids) == 0 {
				continue
			}
			_, err := tx.Exec(ctx, `INSERT INTO `+t.table+` (dataset, id, rec)
				SELECT d, i, r FROM unnest($1::text[], $2::bytea[], $3::bytea[]) WITH ORDINALITY AS u(d, i, r, n)
				ORDER BY n`+t.unique, t.r.datasets, t.r.ids, t.r.recs)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(batch) > 1 && !p.unreachable() {
		for _, w := range batch {
			p.commitBatch([]*write{w})
		}
		return
	}
	for _, w := range batch {
		w.done <- err
	}
}

// unreachable reports whether the last write lost its connection.
func (p *Postgres) unreachable() bool {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.conn == nil
}

// Reports implements Backend.
func (p *Postgres) Reports(dataset string, fn func(id payload.ReportID, upload []byte) error) error {
	return p.appended(dataset, "report", `SELECT seq, rec FROM fedecdf_reports WHERE dataset = $1 ORDER BY seq`,
		func(id payload.ReportID, rest []byte) error {
			_, upload := parseReport(rest)
			return fn(id, upload)
		})
}

// appended calls fn with the ID and rest of each appended record (what:
// "report" or "verdict") of dataset that query selects as (seq, rec),
// checking each record's seal (parseRecord).
func (p *Postgres) appended(dataset, what, query string, fn func(id payload.ReportID, rest []byte) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs, err := p.pool.Query(ctx, query, dataset)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var seq int64
		var rec []byte
		if err := rs.Scan(&seq, &rec); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		_, id, rest, err := p.parseRow(dataset, what, seq, rec)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if err := fn(id, rest); err != nil {
			return err
		}
	}
	if err := rs.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// records returns the record rest (after the ID) of each of ids that
// dataset holds, read in one statement.
func (p *Postgres) records(dataset string, ids []payload.ReportID) (map[payload.ReportID][]byte, error) {
	keys := make([][]byte, len(ids))
	for i := range ids {
		keys[i] = ids[i][:]
	}
	ctx, cancel := readCtx()
	defer cancel()
	rs, err := p.pool.Query(ctx, `SELECT seq, id, rec FROM fedecdf_reports WHERE dataset = $1 AND id = ANY($2)`, dataset, keys)
	if err != nil {
		return nil, err
	}
	held := make(map[payload.ReportID][]byte, len(ids))
	var seq int64
	var key, rec []byte
	_, err = pgx.ForEachRow(rs, []any{&seq, &key, &rec}, func() error {
		_, id, rest, err := p.parseRow(dataset, "report", seq, rec)
		if err != nil {
			return err
		}
		if string(id[:]) != string(key) {
			return fmt.Errorf("%w: database %s, table fedecdf_reports, row seq %d: dataset %q: the record of report %x holds report %v", ErrDamaged, p.name, seq, dataset, key, id)
		}
		held[id] = rest
		return nil
	})
	return held, err
}

// Uploads implements Backend.
func (p *Postgres) Uploads(dataset string, ids []payload.ReportID, fn func(id payload.ReportID, upload []byte) error) error {
	held, err := p.records(dataset, ids)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for _, id := range ids {
		rest, ok := held[id]
		if !ok {
			return fmt.Errorf("store: report %v of dataset %q is not recorded", id, dataset)
		}
		_, upload := parseReport(rest)
		if err := fn(id, upload); err != nil {
			return err
		}
	}
	return nil
}

// ReceivedAt implements Backend.
func (p *Postgres) ReceivedAt(dataset string, ids []payload.ReportID) ([]time.Time, error) {
	held, err := p.records(dataset, ids)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	times := make([]time.Time, len(ids))
	for i, id := range ids {
		if rest, ok := held[id]; ok {
			times[i], _ = parseReport(rest)
		}
	}
	return times, nil
}

// DeleteReports implements Backend.
func (p *Postgres) DeleteReports(dataset string, ids []payload.ReportID) (int, error) {
	keys := make([][]byte, len(ids))
	for i := range ids {
		keys[i] = ids[i][:]
	}
	var n int64
	err := p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM fedecdf_reports WHERE dataset = $1 AND id = ANY($2)`, dataset, keys)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: deleting reports of dataset %q: %w", dataset, err)
	}
	return int(n), nil
}

// NumReports implements Backend.
func (p *Postgres) NumReports(dataset string) (int, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var n int
	if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM fedecdf_reports WHERE dataset = $1`, dataset).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting the reports of dataset %q: %w", dataset, err)
	}
	return n, nil
}

// LoadVerdicts implements Backend: the last record of each report, in
// the order of those records.
func (p *Postgres) LoadVerdicts(dataset string, fn func(id payload.ReportID, record []byte) error) error {
	return p.appended(dataset, "verdict", `SELECT seq, rec FROM fedecdf_verdicts v WHERE dataset = $1
		AND seq = (SELECT max(seq) FROM fedecdf_verdicts w WHERE w.dataset = v.dataset AND w.id = v.id)
		ORDER BY seq`, fn)
}

// parseRow is parseRecord of the record rec of the row seq of the table
// of what (fedecdf_reports, fedecdf_verdicts), its error naming the
// database, the table and the row rather than a file.
func (p *Postgres) parseRow(dataset, what string, seq int64, rec []byte) (uint64, payload.ReportID, []byte, error) {
	s, id, rest, err := parseRecord(dataset, what, seqKey(uint64(seq)), rec)
	if err != nil {
		err = fmt.Errorf("database %s, table fedecdf_%ss, row seq %d: %w", p.name, what, seq, err)
	}
	return s, id, rest, err
}
