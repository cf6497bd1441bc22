package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// Verification spread over the processes of a role (schema version 3).
// Every report recorded is queued (fedecdf_prepare_queue, by a trigger).
// Any process of the role leases a batch of queued reports
// (PrepareNext: SELECT … FOR UPDATE SKIP LOCKED, so two processes never
// take the same report), evaluates and sketches them, and in the same
// transaction records each report's sketch and the SHA-256 of the
// upload it prepared (fedecdf_prepared; schema version 4), appends
// the sum of the batch's prefix vectors as a fold of its own
// (fedecdf_folds) and removes the batch from the queue. A process killed
// while it holds a lease ends its transaction with its session, so its
// batch returns to the queue for another; one that hangs loses it after
// leaseTimeout. Each report is therefore prepared, and folded, once. The
// coordinator verifies a report from its sketch (Sketches, with the
// SHA-256 of the upload prepared, which the upload it verifies must
// have) and sums a release from the folds (Folds). Deleting a report (an orphan purge, a
// quarantine; a trigger, in the deleting transaction) deletes its
// sketch and the fold holding it, and queues that fold's other reports
// again: a report recorded again under the same ID, with other content,
// is queued and prepared anew, the folds never hold a report no longer
// stored, and the cost of a deletion is one batch prepared again, once,
// not a re-derivation at every release.

// prepareSettings are those of a preparation's transaction: the lease
// ends if its process stops working on it for 60 s without ending its
// session; and its commit does not wait for its WAL to be flushed. A
// preparation lost in a crash of PostgreSQL is lost whole (its sketches,
// its fold and the queue's deletion) and is redone, the same, from the
// queue; and a coordinator that verified from its sketch saved its
// verdicts in a later, synchronous commit, which flushed the WAL of the
// preparation before it.
const prepareSettings = `SET LOCAL idle_in_transaction_session_timeout = '60s'; SET LOCAL synchronous_commit = off`

// Prepare is what a process makes of a batch of leased reports: per
// report its sketch (nil: its share does not decode, nothing folded),
// and the fold of the reports with a sketch (nil if none).
type Prepare = func(ids []payload.ReportID, uploads [][]byte) (sketches [][]byte, fold []byte, err error)

// PrepareNext leases up to limit queued reports of dataset, calls
// prepare with their uploads, and records its result, all in one
// transaction; it returns how many reports it prepared (0: none queued
// or all leased by other processes).
func (p *Postgres) PrepareNext(dataset string, limit int, prepare Prepare) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, prepareSettings); err != nil {
			return err
		}
		ids, uploads, err := p.leaseQueued(ctx, tx, dataset, limit)
		n = len(ids)
		return prepareLeased(ctx, tx, dataset, ids, uploads, err, prepare)
	})
	if err != nil {
		return 0, fmt.Errorf("store: preparing reports of dataset %q: %w", dataset, err)
	}
	return n, nil
}

// leaseQueued locks up to limit queued reports of dataset that no other
// transaction holds, oldest first (an index scan: a queue of deleted
// rows not yet vacuumed costs no heap scan), and returns them with
// their uploads.
func (p *Postgres) leaseQueued(ctx context.Context, tx pgx.Tx, dataset string, limit int) ([]payload.ReportID, [][]byte, error) {
	rs, err := tx.Query(ctx, `SELECT id FROM fedecdf_prepare_queue WHERE dataset = $1 ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED`, dataset, limit)
	if err != nil {
		return nil, nil, err
	}
	return p.queuedUploads(ctx, tx, dataset, rs)
}

// queuedUploads returns the queued reports rs selects (by id), locked,
// with their uploads, read by ID.
func (p *Postgres) queuedUploads(ctx context.Context, tx pgx.Tx, dataset string, rs pgx.Rows) ([]payload.ReportID, [][]byte, error) {
	var keys [][]byte
	var key []byte
	if _, err := pgx.ForEachRow(rs, []any{&key}, func() error {
		keys = append(keys, bytes.Clone(key))
		return nil
	}); err != nil || len(keys) == 0 {
		return nil, nil, err
	}
	rs, err := tx.Query(ctx, `SELECT seq, rec FROM fedecdf_reports WHERE dataset = $1 AND id = ANY($2)`, dataset, keys)
	if err != nil {
		return nil, nil, err
	}
	var ids []payload.ReportID
	var uploads [][]byte
	var seq int64
	var rec []byte
	_, err = pgx.ForEachRow(rs, []any{&seq, &rec}, func() error {
		_, id, rest, err := p.parseRow(dataset, "report", seq, rec)
		if err != nil {
			return err
		}
		_, upload := parseReport(rest)
		ids, uploads = append(ids, id), append(uploads, bytes.Clone(upload))
		return nil
	})
	return ids, uploads, err
}

// PrepareNow prepares with prepare those of the reports ids of dataset
// still queued, waiting for the processes preparing some of them to
// finish (their reports are then prepared, or queued again if the
// process died), and records them as PrepareNext does: once it
// returns, every one of ids recorded is prepared. For a coordinator
// that must verify reports its processes have not reached yet.
func (p *Postgres) PrepareNow(dataset string, ids []payload.ReportID, prepare Prepare) error {
	keys := make([][]byte, len(ids))
	for i := range ids {
		keys[i] = ids[i][:]
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, prepareSettings); err != nil {
			return err
		}
		rs, err := tx.Query(ctx, `SELECT id FROM fedecdf_prepare_queue WHERE dataset = $1 AND id = ANY($2) ORDER BY seq FOR UPDATE`, dataset, keys)
		if err != nil {
			return err
		}
		ids, uploads, err := p.queuedUploads(ctx, tx, dataset, rs)
		return prepareLeased(ctx, tx, dataset, ids, uploads, err, prepare)
	})
	if err != nil {
		return fmt.Errorf("store: preparing %d reports of dataset %q: %w", len(ids), dataset, err)
	}
	return nil
}

// prepareLeased prepares the reports ids leased in tx, with their
// uploads, and records them (unless leasing them failed: leaseErr).
func prepareLeased(ctx context.Context, tx pgx.Tx, dataset string, ids []payload.ReportID, uploads [][]byte, leaseErr error, prepare Prepare) error {
	if leaseErr != nil || len(ids) == 0 {
		return leaseErr
	}
	sketches, fold, err := prepare(ids, uploads)
	if err != nil {
		return err
	}
	if len(sketches) != len(ids) {
		return fmt.Errorf("%d sketches for %d reports", len(sketches), len(ids))
	}
	return recordPrepared(ctx, tx, dataset, ids, uploads, sketches, fold)
}

// recordPrepared appends fold, records each report's sketch, the fold
// holding it and the SHA-256 of the upload it was prepared from, and
// removes the reports from the queue.
func recordPrepared(ctx context.Context, tx pgx.Tx, dataset string, ids []payload.ReportID, uploads, sketches [][]byte, fold []byte) error {
	var foldSeq *int64
	folded := 0
	for _, sk := range sketches {
		if sk != nil {
			folded++
		}
	}
	if folded > 0 {
		if fold == nil {
			return errors.New("reports sketched but no fold")
		}
		foldSeq = new(int64)
		if err := tx.QueryRow(ctx, `INSERT INTO fedecdf_folds (dataset, reports, agg) VALUES ($1, $2, $3) RETURNING seq`,
			dataset, folded, fold).Scan(foldSeq); err != nil {
			return err
		}
	}
	keys, digests := make([][]byte, len(ids)), make([][]byte, len(ids))
	for i := range ids {
		d := sha256.Sum256(uploads[i])
		keys[i], digests[i] = ids[i][:], d[:]
	}
	if _, err := tx.Exec(ctx, `INSERT INTO fedecdf_prepared (dataset, id, sketch, fold, upload_sha256)
		SELECT $1, i, s, CASE WHEN s IS NULL THEN NULL ELSE $4::bigint END, h FROM unnest($2::bytea[], $3::bytea[], $5::bytea[]) AS u(i, s, h)`,
		dataset, keys, sketches, foldSeq, digests); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM fedecdf_prepare_queue WHERE dataset = $1 AND id = ANY($2)`, dataset, keys)
	return err
}

// Sketches returns the recorded sketch of each of ids of dataset that
// has one (none for a report not yet prepared, or whose share did not
// decode), and the SHA-256 of the upload it was prepared from.
func (p *Postgres) Sketches(dataset string, ids []payload.ReportID) (sketches map[payload.ReportID][]byte, uploads map[payload.ReportID][sha256.Size]byte, err error) {
	keys := make([][]byte, len(ids))
	for i := range ids {
		keys[i] = ids[i][:]
	}
	ctx, cancel := readCtx()
	defer cancel()
	rs, err := p.pool.Query(ctx, `SELECT id, sketch, upload_sha256 FROM fedecdf_prepared WHERE dataset = $1 AND id = ANY($2) AND sketch IS NOT NULL`, dataset, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("store: reading sketches of dataset %q: %w", dataset, err)
	}
	sketches, uploads = make(map[payload.ReportID][]byte, len(ids)), make(map[payload.ReportID][sha256.Size]byte, len(ids))
	var key, sk, digest []byte
	_, err = pgx.ForEachRow(rs, []any{&key, &sk, &digest}, func() error {
		var id payload.ReportID
		if len(key) != len(id) || len(digest) != sha256.Size {
			return fmt.Errorf("%w: database %s, table fedecdf_prepared: a prepared report's row holds an ID of %d bytes and a digest of %d", ErrDamaged, p.name, len(key), len(digest))
		}
		copy(id[:], key)
		sketches[id], uploads[id] = sk, [sha256.Size]byte(digest)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: reading sketches of dataset %q: %w", dataset, err)
	}
	return sketches, uploads, nil
}

// Folds returns, read in one snapshot, every fold of dataset and the
// reports they hold, each with the SHA-256 of its upload as it was
// folded (the bytes Uploads returned then): the folds sum exactly those
// reports' prefix vectors (a fold holding a report deleted since is
// gone, its other reports queued again).
func (p *Postgres) Folds(dataset string) (folds [][]byte, reports map[payload.ReportID][sha256.Size]byte, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, `SELECT agg FROM fedecdf_folds WHERE dataset = $1 ORDER BY seq`, dataset)
		if err != nil {
			return err
		}
		var agg []byte
		if _, err := pgx.ForEachRow(rs, []any{&agg}, func() error {
			folds = append(folds, agg)
			return nil
		}); err != nil {
			return err
		}
		rs, err = tx.Query(ctx, `SELECT id, upload_sha256 FROM fedecdf_prepared WHERE dataset = $1 AND fold IS NOT NULL`, dataset)
		if err != nil {
			return err
		}
		reports = map[payload.ReportID][sha256.Size]byte{}
		var key, digest []byte
		_, err = pgx.ForEachRow(rs, []any{&key, &digest}, func() error {
			var id payload.ReportID
			if len(key) != len(id) || len(digest) != sha256.Size {
				return fmt.Errorf("%w: database %s, table fedecdf_prepared: a folded report's row holds an ID of %d bytes and a digest of %d", ErrDamaged, p.name, len(key), len(digest))
			}
			copy(id[:], key)
			reports[id] = [sha256.Size]byte(digest)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: reading the folds of dataset %q: %w", dataset, err)
	}
	return folds, reports, nil
}

// DrainQueue empties dataset's queue of reports to prepare: for a
// dataset whose reports no process prepares (not verified DCF).
func (p *Postgres) DrainQueue(dataset string) error {
	ctx, cancel := readCtx()
	defer cancel()
	if _, err := p.pool.Exec(ctx, `DELETE FROM fedecdf_prepare_queue WHERE dataset = $1`, dataset); err != nil {
		return fmt.Errorf("store: emptying the queue of dataset %q: %w", dataset, err)
	}
	return nil
}

// VerifyKeyIs reports whether the verify key the role's coordinator
// recorded for dataset (CheckVerifyKey) is key (false if none is
// recorded yet), without writing: a standby prepares reports only under
// the key its coordinator verifies with.
func (p *Postgres) VerifyKeyIs(dataset string, key []byte) (bool, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var rec []byte
	err := p.pool.QueryRow(ctx, `SELECT rec FROM fedecdf_verify_keys WHERE dataset = $1`, dataset).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: dataset %q: reading the verify key: %w", dataset, err)
	}
	old, err := Unseal(string(verifyKeyBucket), []byte(dataset), rec)
	if err != nil {
		return false, fmt.Errorf("store: database %s, table fedecdf_verify_keys, the row of dataset %q: %w", p.name, dataset, err)
	}
	return compareVerifyKey(dataset, old, append([]byte{verifyKeyVersion}, key...)) == nil, nil
}
