package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"
)

// pgBench is the PostgreSQL side of bench ingest --store: a schema of
// the database per server, and the cluster's processes whose CPU and
// writes the servers cause (the backends of their connections, told
// apart by application_name, and the cluster's background processes:
// WAL writer, checkpointer, background writer, autovacuum).
type pgBench struct {
	base string // the DSN given
	tag  string // names the schemas and the servers' application_name
	conn *pgx.Conn
	// backends is the number of the servers' backends the last usage
	// found.
	backends int
}

// newPGBench connects to dsn and creates the two servers' schemas.
func newPGBench(ctx context.Context, dsn string) (*pgBench, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	var b [4]byte
	rand.Read(b[:])
	p := &pgBench{base: dsn, tag: "fedecdf_bench_" + hex.EncodeToString(b[:]), conn: conn}
	for _, role := range []string{"leader", "helper"} {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA `+p.schema(role)); err != nil {
			conn.Close(ctx)
			return nil, fmt.Errorf("--store: creating the %s's schema: %w", role, err)
		}
	}
	return p, nil
}

func (p *pgBench) schema(role string) string { return p.tag + "_" + role }

// dsn is the --store of the server of role: its schema, and an
// application_name naming its connections.
func (p *pgBench) dsn(role string) string {
	sep := "?"
	if strings.Contains(p.base, "?") {
		sep = "&"
	}
	return p.base + sep + "search_path=" + p.schema(role) + "&application_name=" + p.schema(role)
}

// usage reads the usage of the servers' backends and of the cluster's
// background processes, by PID (a process started during the load has
// no usage before it).
func (p *pgBench) usage(ctx context.Context) (map[int]procUsage, error) {
	rows, err := p.conn.Query(ctx, `SELECT pid, application_name LIKE $1 FROM pg_stat_activity
		WHERE application_name LIKE $1 OR backend_type <> 'client backend'`, p.tag+"\\_%")
	if err != nil {
		return nil, err
	}
	var pid int32
	var server bool
	var pids []int32
	p.backends = 0
	if _, err := pgx.ForEachRow(rows, []any{&pid, &server}, func() error {
		pids = append(pids, pid)
		if server {
			p.backends++
		}
		return nil
	}); err != nil {
		return nil, err
	}
	u := map[int]procUsage{}
	for _, pid := range pids {
		pu, err := readProcUsage(int(pid))
		if errors.Is(err, fs.ErrNotExist) {
			continue // ended since
		}
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL process %d: %w (is the database on another machine? bench ingest --store measures a local cluster)", pid, err)
		}
		u[int(pid)] = pu
	}
	return u, nil
}

// storeBytes returns the size of the servers' tables, their indexes and
// TOAST included.
func (p *pgBench) storeBytes(ctx context.Context) (int64, error) {
	var n int64
	err := p.conn.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
		WHERE s.nspname LIKE $1 AND c.relkind = 'r'`, p.tag+"\\_%").Scan(&n)
	return n, err
}

// close drops the schemas (unless keep) and disconnects.
func (p *pgBench) close(ctx context.Context, keep bool) error {
	var err error
	if !keep {
		for _, role := range []string{"leader", "helper"} {
			_, e := p.conn.Exec(ctx, `DROP SCHEMA `+p.schema(role)+` CASCADE`)
			err = errors.Join(err, e)
		}
	}
	return errors.Join(err, p.conn.Close(ctx))
}

// pgDelta sums the CPU and the bytes written by the processes of after
// since before.
func pgDelta(before, after map[int]procUsage) (cpuSeconds float64, written int64) {
	for pid, a := range after {
		b := before[pid]
		cpuSeconds += (a.cpu - b.cpu).Seconds()
		written += a.written - b.written
	}
	return cpuSeconds, written
}
