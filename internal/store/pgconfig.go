package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Config implements Backend: the configuration record is the row
// "config" of fedecdf_meta, as the bbolt store's meta/config.
func (p *Postgres) Config() ([]byte, bool, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var rec []byte
	err := p.pool.QueryRow(ctx, `SELECT value FROM fedecdf_meta WHERE key = $1`, string(configKey)).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: reading the configuration record: %w", err)
	}
	if rec == nil {
		rec = []byte{}
	}
	return rec, true, nil
}

// SetConfig implements Backend.
func (p *Postgres) SetConfig(rec []byte) error {
	if rec == nil {
		rec = []byte{}
	}
	err := p.write(pgx.ReadCommitted, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO fedecdf_meta (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, string(configKey), rec)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: recording the configuration record: %w", err)
	}
	return nil
}

// HasReleases implements Backend.
func (p *Postgres) HasReleases(dataset string) (bool, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var found bool
	if err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM fedecdf_releases WHERE dataset = $1)`, dataset).Scan(&found); err != nil {
		return false, fmt.Errorf("store: dataset %q: %w", dataset, err)
	}
	return found, nil
}
