package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Charge implements ledger.Ledger: one serialisable transaction reads
// the dataset's spending (locking its row) and whether the release is
// charged, applies ledger.Admit, and records both; a serialisation
// failure is retried from the start. Charging a recorded release again
// is a no-op.
func (p *Postgres) Charge(dataset string, release payload.ReleaseID, cost, total ledger.Budget) error {
	err := p.write(pgx.Serializable, func(ctx context.Context, tx pgx.Tx) error {
		var b []byte
		err := tx.QueryRow(ctx, `SELECT spent FROM fedecdf_ledgers WHERE dataset = $1 FOR UPDATE`, dataset).Scan(&b)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		spent, err := parseSpent(b, dataset)
		if err != nil {
			return err
		}
		var charged bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM fedecdf_charges WHERE dataset = $1 AND release = $2)`, dataset, release[:]).Scan(&charged); err != nil {
			return err
		}
		if err := ledger.Admit(charged, spent, cost, total); err != nil {
			return fmt.Errorf("dataset %q: %w", dataset, err)
		}
		if charged {
			return nil
		}
		if b, err = json.Marshal(spent.Add(cost)); err != nil {
			return err
		}
		b = Seal(ledgerWhere(dataset), spentKey, b)
		if _, err := tx.Exec(ctx, `INSERT INTO fedecdf_ledgers (dataset, spent) VALUES ($1, $2)
			ON CONFLICT (dataset) DO UPDATE SET spent = excluded.spent`, dataset, b); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO fedecdf_charges VALUES ($1, $2, $3)`, dataset, release[:], time.Now().UTC().Format(time.RFC3339))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// ledgerColumn returns the column (spent or total) of dataset's ledger
// row, nil if none.
func (p *Postgres) ledgerColumn(dataset, column string) ([]byte, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var b []byte
	err := p.pool.QueryRow(ctx, `SELECT `+column+` FROM fedecdf_ledgers WHERE dataset = $1`, dataset).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return b, err
}

// Spent implements ledger.Ledger.
func (p *Postgres) Spent(dataset string) (ledger.Budget, error) {
	b, err := p.ledgerColumn(dataset, "spent")
	if err == nil {
		var spent ledger.Budget
		if spent, err = parseSpent(b, dataset); err == nil {
			return spent, nil
		}
	}
	return ledger.Budget{}, fmt.Errorf("store: %w", err)
}

// Charged implements ledger.Ledger.
func (p *Postgres) Charged(dataset string, release payload.ReleaseID) (bool, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var charged bool
	if err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM fedecdf_charges WHERE dataset = $1 AND release = $2)`, dataset, release[:]).Scan(&charged); err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	return charged, nil
}

// Releases implements ledger.Ledger: the number of releases charged on
// dataset's ledger.
func (p *Postgres) Releases(dataset string) (uint64, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var n int64
	if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM fedecdf_charges WHERE dataset = $1`, dataset).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	return uint64(n), nil
}

// Total implements Backend.
func (p *Postgres) Total(dataset string) (ledger.Budget, bool, error) {
	var total ledger.Budget
	b, err := p.ledgerColumn(dataset, "total")
	if err == nil && b != nil {
		if b, err = Unseal(ledgerWhere(dataset), totalKey, b); err == nil {
			err = json.Unmarshal(b, &total)
		}
		if err == nil {
			err = total.Valid()
		}
		if err != nil {
			err = fmt.Errorf("database %s, table fedecdf_ledgers, the row of dataset %q: total: %w", p.name, dataset, err)
		}
	}
	if err != nil {
		return ledger.Budget{}, false, fmt.Errorf("store: %w", err)
	}
	return total, b != nil, nil
}

// SetTotal implements Backend.
func (p *Postgres) SetTotal(dataset string, total ledger.Budget) error {
	if err := total.Valid(); err != nil {
		return fmt.Errorf("store: dataset %q: total: %w", dataset, err)
	}
	b, err := json.Marshal(total)
	if err == nil {
		b = Seal(ledgerWhere(dataset), totalKey, b)
		err = p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO fedecdf_ledgers (dataset, total) VALUES ($1, $2)
				ON CONFLICT (dataset) DO UPDATE SET total = excluded.total`, dataset, b)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("store: recording the total budget of dataset %q: %w", dataset, err)
	}
	return nil
}

// SaveRelease implements Backend: the record, with the server's secret
// seed of the release, is committed before it returns.
func (p *Postgres) SaveRelease(dataset string, release payload.ReleaseID, record []byte) error {
	err := p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO fedecdf_releases VALUES ($1, $2, $3)
			ON CONFLICT (dataset, release) DO UPDATE SET rec = excluded.rec`, dataset, release[:], Seal(seedsWhere(dataset), release[:], record))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: recording release %v of dataset %q: %w", release, dataset, err)
	}
	return nil
}

// DeleteRelease implements Backend.
func (p *Postgres) DeleteRelease(dataset string, release payload.ReleaseID) error {
	err := p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM fedecdf_releases WHERE dataset = $1 AND release = $2`, dataset, release[:])
		return err
	})
	if err != nil {
		return fmt.Errorf("store: deleting release %v of dataset %q: %w", release, dataset, err)
	}
	return nil
}

// LoadReleases implements Backend, in release ID order.
func (p *Postgres) LoadReleases(dataset string, fn func(release payload.ReleaseID, record []byte) error) error {
	ctx, cancel := readCtx()
	defer cancel()
	rs, err := p.pool.Query(ctx, `SELECT release, rec FROM fedecdf_releases WHERE dataset = $1 ORDER BY release`, dataset)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	var key, rec []byte
	var fnErr error
	_, err = pgx.ForEachRow(rs, []any{&key, &rec}, func() error {
		var id payload.ReleaseID
		if len(key) != len(id) {
			return fmt.Errorf("store: dataset %q: a release record under the key %x, not a release ID", dataset, key)
		}
		copy(id[:], key)
		value, err := Unseal(seedsWhere(dataset), key, rec)
		if err != nil {
			fnErr = fmt.Errorf("store: database %s, table fedecdf_releases, the row of dataset %q, release %v: %w", p.name, dataset, id, err)
			return fnErr
		}
		fnErr = fn(id, value)
		return fnErr
	})
	if err != nil && err != fnErr {
		return fmt.Errorf("store: %w", err)
	}
	return err
}

// CheckVerifyKey implements Backend.
func (p *Postgres) CheckVerifyKey(dataset string, key []byte) error {
	want := append([]byte{verifyKeyVersion}, key...)
	var old []byte
	err := p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
		sealed := Seal(string(verifyKeyBucket), []byte(dataset), want)
		if _, err := tx.Exec(ctx, `INSERT INTO fedecdf_verify_keys VALUES ($1, $2)
			ON CONFLICT (dataset) DO UPDATE SET rec = excluded.rec
			WHERE NOT EXISTS (SELECT 1 FROM fedecdf_verdicts WHERE dataset = $1)`, dataset, sealed); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT rec FROM fedecdf_verify_keys WHERE dataset = $1`, dataset).Scan(&old)
	})
	if err != nil {
		return fmt.Errorf("store: dataset %q: verify key: %w", dataset, err)
	}
	if old, err = Unseal(string(verifyKeyBucket), []byte(dataset), old); err != nil {
		return fmt.Errorf("store: database %s, table fedecdf_verify_keys, the row of dataset %q: %w", p.name, dataset, err)
	}
	return compareVerifyKey(dataset, old, want)
}
