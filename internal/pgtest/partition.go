package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
)

// Partition is a login role of its own through which one process
// reaches a test's schema, so that the test can cut that process from
// the database as a network partition would, and let it back. Ending a
// live process's sessions (pg_terminate_backend) alone does not keep
// it out: it reconnects at once, and whether another process acts
// before it does is a race the machine's load decides. Cut, the role
// cannot log in: the process's every reconnection fails until Heal.
type Partition struct {
	// DSN is the schema's DSN as the role.
	DSN  string
	base string // the schema's DSN, as the test's user
	role string
}

// NewPartition creates, for t, a login role with every privilege on the
// schema of dsn (a DSN Schema returned, a postgres:// URL), and returns
// it with the schema's DSN as that role; the role, and the tables it
// created, are dropped when t ends (before the schema: call it after
// Schema, and before starting the processes using it).
func NewPartition(t testing.TB, dsn string) *Partition {
	t.Helper()
	u, err := url.Parse(dsn)
	schema := ""
	if err == nil {
		schema = u.Query().Get("search_path")
	}
	if err != nil || schema == "" || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: a partition needs a schema's postgres:// DSN (Schema's), not %q (%v)", dsn, err)
	}
	var b [6]byte
	rand.Read(b[:])
	role := "fedecdf_p_" + hex.EncodeToString(b[:])
	Exec(t, dsn, `CREATE ROLE `+role+` LOGIN; GRANT ALL ON SCHEMA `+schema+` TO `+role)
	t.Cleanup(func() {
		Exec(t, dsn, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity WHERE usename = '`+role+`'`)
		Exec(t, dsn, `DROP OWNED BY `+role+`; DROP ROLE `+role)
	})
	u.User = url.User(role)
	return &Partition{DSN: u.String(), base: dsn, role: role}
}

// Cut ends the role's sessions and keeps it from opening new ones until
// Heal: from then on the process sees the database unreachable.
func (p *Partition) Cut(t testing.TB) {
	t.Helper()
	Exec(t, p.base, `ALTER ROLE `+p.role+` NOLOGIN`)
	Exec(t, p.base, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity WHERE usename = '`+p.role+`'`)
}

// Heal lets the role log in again.
func (p *Partition) Heal(t testing.TB) {
	t.Helper()
	Exec(t, p.base, `ALTER ROLE `+p.role+` LOGIN`)
}
