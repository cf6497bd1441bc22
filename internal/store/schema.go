package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the PostgreSQL store's schema, one forward-only step
// per version: migrations[i] takes a database of schema version i to
// i+1. A released step is never edited; a change is a new step. The
// records in the tables are those of the bbolt store (records.go), so
// FormatVersion is checked apart (fedecdf_meta's "format").
//
// Version 1:
//
//	fedecdf_schema(version)                      the schema version, one row
//	fedecdf_meta(key, value)                     "format" = FormatVersion (one byte)
//	fedecdf_reports(seq, dataset, id, rec)       rec = reportRecord; unique (dataset, id): the dedup
//	fedecdf_verdicts(seq, dataset, id, rec)      rec = idRecord(id, verdict); the last seq of an id counts
//	fedecdf_ledgers(dataset, spent, total)       the JSON of ledger.Budget, as the bbolt store's
//	fedecdf_charges(dataset, release, at)        the releases charged
//	fedecdf_releases(dataset, release, rec)      the server's release records (secret)
//	fedecdf_verify_keys(dataset, rec)            verifyKeyVersion ‖ key
//
// seq orders the records as appended.
//
// Version 2 (several processes per role):
//
//	fedecdf_reports.xid                          the inserting transaction (pg_current_xact_id);
//	                                             indexed with dataset: the coordinator's tail (ReportsAfter)
//	fedecdf_quarantine(dataset, id, at)          the reports set aside (QuarantinePostgres)
//
// Version 3 (what fedecdf status shows of each process, and
// verification spread over the processes of a role, pgprepare.go):
//
//	fedecdf_processes(id, coordinator, upload_addr, listen, uploads, started, seen)
//	                                             one row per process (Heartbeat), seen its last beat
//	fedecdf_prepare_queue(dataset, id, seq)      the reports no process prepared yet: filled by a
//	                                             trigger on fedecdf_reports (and, at the migration,
//	                                             with every report recorded); leased FOR UPDATE SKIP LOCKED
//	fedecdf_folds(seq, dataset, reports, agg)    one process's sum of a batch's prefix vectors
//	                                             (server.Preparer's fold), appended, never updated;
//	                                             deleted when a report it holds is (a trigger on
//	                                             fedecdf_reports, which queues its other reports again)
//	fedecdf_prepared(dataset, id, sketch, fold)  a report's sketch (vdcf.Pending.Sketch; NULL: its
//	                                             share does not decode) and the fold holding it;
//	                                             deleted with the report (that trigger), so an ID
//	                                             recorded again is queued and prepared anew
//
// Version 4 (the fold remembers what it folded):
//
//	fedecdf_prepared.upload_sha256               the SHA-256 of the report's upload as it was prepared
//	                                             (the bytes Uploads returns): a read-back to take its
//	                                             output out of a fold (server's foldedSums) is checked
//	                                             against it. A preparation of version 3 has no such
//	                                             digest: the migration deletes every sketch and fold
//	                                             and queues every report again, prepared anew, once.
//	                                             It truncates both tables in one statement: deleting
//	                                             the folds row by row checked each one's foreign key
//	                                             with a scan of fedecdf_prepared, quadratic in the
//	                                             reports (EXPERIMENTS.md, "The schema 3 → 4
//	                                             migration")
//	fedecdf_prepared_fold                        an index on fedecdf_prepared(fold): deleting a
//	                                             report (a purge, a quarantine) takes its fold apart
//	                                             (fedecdf_unprepare), which scanned the whole table
//	                                             twice without it
//
// Version 4's step was changed so in place, before any release (the
// truncation, the index): a database it made before has no index, and
// is otherwise the same.
var migrations = []string{
	`CREATE TABLE fedecdf_meta (key text PRIMARY KEY, value bytea NOT NULL);
	CREATE TABLE fedecdf_reports (
		seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		dataset text NOT NULL CHECK (dataset <> ''),
		id bytea NOT NULL,
		rec bytea NOT NULL);
	CREATE UNIQUE INDEX fedecdf_reports_id ON fedecdf_reports (dataset, id);
	CREATE TABLE fedecdf_verdicts (
		seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		dataset text NOT NULL CHECK (dataset <> ''),
		id bytea NOT NULL,
		rec bytea NOT NULL);
	CREATE INDEX fedecdf_verdicts_id ON fedecdf_verdicts (dataset, id, seq);
	CREATE TABLE fedecdf_ledgers (dataset text PRIMARY KEY, spent bytea, total bytea);
	CREATE TABLE fedecdf_charges (dataset text NOT NULL, release bytea NOT NULL, at text NOT NULL, PRIMARY KEY (dataset, release));
	CREATE TABLE fedecdf_releases (dataset text NOT NULL, release bytea NOT NULL, rec bytea NOT NULL, PRIMARY KEY (dataset, release));
	CREATE TABLE fedecdf_verify_keys (dataset text PRIMARY KEY, rec bytea NOT NULL);`,
	`ALTER TABLE fedecdf_reports ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
	CREATE INDEX fedecdf_reports_xid ON fedecdf_reports (dataset, xid);
	CREATE TABLE fedecdf_quarantine (dataset text NOT NULL, id bytea NOT NULL, at text NOT NULL, PRIMARY KEY (dataset, id));`,
	`CREATE TABLE fedecdf_processes (id text PRIMARY KEY, coordinator boolean NOT NULL, upload_addr text NOT NULL,
		listen text NOT NULL, uploads bigint NOT NULL, started timestamptz NOT NULL, seen timestamptz NOT NULL);
	CREATE TABLE fedecdf_prepare_queue (dataset text NOT NULL, id bytea NOT NULL, seq bigint NOT NULL, PRIMARY KEY (dataset, id),
		FOREIGN KEY (dataset, id) REFERENCES fedecdf_reports (dataset, id) ON DELETE CASCADE);
	CREATE INDEX fedecdf_prepare_queue_seq ON fedecdf_prepare_queue (dataset, seq);
	CREATE TABLE fedecdf_folds (
		seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		dataset text NOT NULL,
		reports integer NOT NULL,
		agg bytea NOT NULL);
	CREATE INDEX fedecdf_folds_dataset ON fedecdf_folds (dataset);
	CREATE TABLE fedecdf_prepared (dataset text NOT NULL, id bytea NOT NULL, sketch bytea, fold bigint REFERENCES fedecdf_folds,
		PRIMARY KEY (dataset, id));
	CREATE FUNCTION fedecdf_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO fedecdf_prepare_queue SELECT NEW.dataset, NEW.id, NEW.seq
			WHERE NOT EXISTS (SELECT 1 FROM fedecdf_prepared p WHERE p.dataset = NEW.dataset AND p.id = NEW.id);
			RETURN NULL;
		END $$;
	CREATE TRIGGER fedecdf_reports_enqueue AFTER INSERT ON fedecdf_reports FOR EACH ROW EXECUTE FUNCTION fedecdf_enqueue();
	CREATE FUNCTION fedecdf_unprepare() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE f bigint;
		BEGIN
			DELETE FROM fedecdf_prepared p WHERE p.dataset = OLD.dataset AND p.id = OLD.id RETURNING p.fold INTO f;
			IF f IS NOT NULL THEN
				WITH gone AS (DELETE FROM fedecdf_prepared p WHERE p.fold = f RETURNING p.id)
				INSERT INTO fedecdf_prepare_queue SELECT r.dataset, r.id, r.seq FROM fedecdf_reports r JOIN gone g ON g.id = r.id
					WHERE r.dataset = OLD.dataset ON CONFLICT DO NOTHING;
				DELETE FROM fedecdf_folds WHERE seq = f;
			END IF;
			RETURN NULL;
		END $$;
	CREATE TRIGGER fedecdf_reports_unprepare AFTER DELETE ON fedecdf_reports FOR EACH ROW EXECUTE FUNCTION fedecdf_unprepare();
	INSERT INTO fedecdf_prepare_queue SELECT dataset, id, seq FROM fedecdf_reports;`,
	`TRUNCATE fedecdf_prepared, fedecdf_folds;
	ALTER TABLE fedecdf_prepared ADD COLUMN upload_sha256 bytea NOT NULL CHECK (octet_length(upload_sha256) = 32);
	CREATE INDEX fedecdf_prepared_fold ON fedecdf_prepared (fold);
	INSERT INTO fedecdf_prepare_queue SELECT dataset, id, seq FROM fedecdf_reports ON CONFLICT DO NOTHING;`,
}

// SchemaVersion is the PostgreSQL schema this fedecdf writes: the
// number of migrations.
var SchemaVersion = len(migrations)

// migrate brings p's database to SchemaVersion on its writing
// connection under an advisory lock (so that two processes starting at
// once migrate it once: the second waits), within migrateTimeout, and
// refuses a newer schema (ErrSchema) or another record format
// (ErrFormat).
func (p *Postgres) migrate() error {
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	const lock = `hashtext('fedecdf migrate ' || current_schema())`
	if _, err := p.conn.Exec(ctx, `SELECT pg_advisory_lock(`+lock+`)`); err != nil {
		return err
	}
	err := migrateLocked(ctx, p.conn, migrations)
	_, uerr := p.conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lock+`)`)
	return errors.Join(err, uerr)
}

// migrateLocked applies steps from the database's version on, each in a
// transaction of its own with the version it reaches, and checks the
// record format of a database it did not create.
func migrateLocked(ctx context.Context, conn *pgx.Conn, steps []string) error {
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS fedecdf_schema (version integer NOT NULL)`); err != nil {
		return err
	}
	var version int
	err := conn.QueryRow(ctx, `SELECT version FROM fedecdf_schema`).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err = conn.Exec(ctx, `INSERT INTO fedecdf_schema VALUES (0)`); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if version > len(steps) {
		return fmt.Errorf("%w: the database is at schema version %d, this fedecdf knows versions up to %d", ErrSchema, version, len(steps))
	}
	fresh := version == 0
	for v := version; v < len(steps); v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, steps[v]); err != nil {
				return err
			}
			if v == 0 {
				if _, err := tx.Exec(ctx, `INSERT INTO fedecdf_meta VALUES ('format', $1)`, []byte{FormatVersion}); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `UPDATE fedecdf_schema SET version = $1`, v+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("schema migration to version %d: %w", v+1, err)
		}
	}
	if fresh {
		return nil
	}
	var format []byte
	if err := conn.QueryRow(ctx, `SELECT value FROM fedecdf_meta WHERE key = 'format'`).Scan(&format); err != nil {
		return fmt.Errorf("reading the record format: %w", err)
	}
	if len(format) != 1 || format[0] != FormatVersion {
		return fmt.Errorf("%w: the database holds records of format %v, this fedecdf reads format %d", ErrFormat, format, FormatVersion)
	}
	return nil
}
