package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// QuarantinePostgres is Quarantine for the PostgreSQL database of dsn,
// on which no server process may run (ErrLocked while a coordinator
// does; stop its standbys too, which do not hold the lock): in one
// transaction it deletes every report and verdict record of ids —
// whether its seal holds or not — and records each ID in
// fedecdf_quarantine, so that the store refuses it if uploaded again
// (ErrQuarantined). It returns the number of records deleted.
func QuarantinePostgres(dsn, passwordFile, dataset string, ids []payload.ReportID) (int, error) {
	p, err := OpenPostgres(dsn, passwordFile)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	keys := make([][]byte, len(ids))
	for i := range ids {
		keys[i] = ids[i][:]
	}
	var deleted int64
	err = p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
		deleted = 0
		for _, table := range []string{"fedecdf_reports", "fedecdf_verdicts"} {
			tag, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE dataset = $1 AND id = ANY($2)`, dataset, keys)
			if err != nil {
				return err
			}
			deleted += tag.RowsAffected()
		}
		_, err := tx.Exec(ctx, `INSERT INTO fedecdf_quarantine (dataset, id, at) SELECT $1, i, $3 FROM unnest($2::bytea[]) AS i
			ON CONFLICT DO NOTHING`, dataset, keys, time.Now().UTC().Format(time.RFC3339))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: %s: quarantining %d reports of dataset %q: %w", p.name, len(ids), dataset, err)
	}
	return int(deleted), nil
}

// QuarantineBackend sets reports aside in the store spec names:
// QuarantinePostgres for a postgres:// DSN, else Quarantine of the bbolt
// file (passwordFile must then be empty).
func QuarantineBackend(spec, passwordFile, dataset string, ids []payload.ReportID) (int, error) {
	if IsPostgres(spec) {
		return QuarantinePostgres(spec, passwordFile, dataset, ids)
	}
	if passwordFile != "" {
		return 0, errPasswordForFile
	}
	return Quarantine(spec, dataset, ids)
}

// Quarantined reports whether report id of dataset was set aside by
// QuarantinePostgres before p was opened.
func (p *Postgres) Quarantined(dataset string, id payload.ReportID) bool {
	return p.quarantined[dataset][id]
}

// loadQuarantine reads the quarantined IDs of every dataset.
func (p *Postgres) loadQuarantine(ctx context.Context) (map[string]map[payload.ReportID]bool, error) {
	rs, err := p.pool.Query(ctx, `SELECT dataset, id FROM fedecdf_quarantine`)
	if err != nil {
		return nil, err
	}
	out := map[string]map[payload.ReportID]bool{}
	var dataset string
	var key []byte
	_, err = pgx.ForEachRow(rs, []any{&dataset, &key}, func() error {
		var id payload.ReportID
		if len(key) != len(id) {
			return fmt.Errorf("%w: a quarantined report of dataset %q with the ID %x", ErrDamaged, dataset, key)
		}
		copy(id[:], key)
		if out[dataset] == nil {
			out[dataset] = map[payload.ReportID]bool{}
		}
		out[dataset][id] = true
		return nil
	})
	return out, err
}
