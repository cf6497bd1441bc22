package store

import (
	"fmt"
	"time"
)

// Process is what one server process of a role on a shared database
// last said of itself (Heartbeat): its ID (unique per process start),
// whether it coordinated, its sealed-upload and libp2p listen
// addresses, the uploads it acknowledged since it started, when it
// started and when it last beat (the database's clock).
type Process struct {
	ID          string
	Coordinator bool
	UploadAddr  string
	Listen      string
	Uploads     int64
	Started     time.Time
	Seen        time.Time
}

// Heartbeat records pr as its process's latest state (its row in
// fedecdf_processes, by ID; Started and Seen are set by the database on
// the first beat and on every one), and deletes the rows of processes
// not seen for longer than forget. Any process writes it, standby or
// coordinator: it is not the ledger nor a report, and none of the
// coordinator's decisions reads it.
func (p *Postgres) Heartbeat(pr Process, forget time.Duration) error {
	ctx, cancel := readCtx()
	defer cancel()
	_, err := p.pool.Exec(ctx, `WITH beat AS (
			INSERT INTO fedecdf_processes (id, coordinator, upload_addr, listen, uploads, started, seen)
			VALUES ($1, $2, $3, $4, $5, now(), now())
			ON CONFLICT (id) DO UPDATE SET coordinator = $2, upload_addr = $3, listen = $4, uploads = $5, seen = now())
		DELETE FROM fedecdf_processes WHERE seen < now() - $6::interval AND id <> $1`,
		pr.ID, pr.Coordinator, pr.UploadAddr, pr.Listen, pr.Uploads, fmt.Sprintf("%d microseconds", forget.Microseconds()))
	if err != nil {
		return fmt.Errorf("store: %s: recording process %s: %w", p.name, pr.ID, err)
	}
	return nil
}

// Leave deletes the row of process id (a process stopping).
func (p *Postgres) Leave(id string) error {
	ctx, cancel := readCtx()
	defer cancel()
	if _, err := p.pool.Exec(ctx, `DELETE FROM fedecdf_processes WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: %s: removing process %s: %w", p.name, id, err)
	}
	return nil
}

// Processes returns the processes seen within the last within (by the
// database's clock), the coordinator first, then by start; and the
// database's current time, against which Seen is read.
func (p *Postgres) Processes(within time.Duration) ([]Process, time.Time, error) {
	ctx, cancel := readCtx()
	defer cancel()
	var now time.Time
	if err := p.pool.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return nil, now, fmt.Errorf("store: %s: listing processes: %w", p.name, err)
	}
	rows, err := p.pool.Query(ctx, `SELECT id, coordinator, upload_addr, listen, uploads, started, seen FROM fedecdf_processes
		WHERE seen >= $1::timestamptz - $2::interval ORDER BY coordinator DESC, started, id`, now, fmt.Sprintf("%d microseconds", within.Microseconds()))
	if err != nil {
		return nil, now, fmt.Errorf("store: %s: listing processes: %w", p.name, err)
	}
	defer rows.Close()
	var ps []Process
	for rows.Next() {
		var pr Process
		if err := rows.Scan(&pr.ID, &pr.Coordinator, &pr.UploadAddr, &pr.Listen, &pr.Uploads, &pr.Started, &pr.Seen); err != nil {
			return nil, now, fmt.Errorf("store: %s: listing processes: %w", p.name, err)
		}
		ps = append(ps, pr)
	}
	if err := rows.Err(); err != nil {
		return nil, now, fmt.Errorf("store: %s: listing processes: %w", p.name, err)
	}
	return ps, now, nil
}
