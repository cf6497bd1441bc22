package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN is the environment variable naming the test database (a
// postgres:// URL holding no password).
const EnvDSN = "FEDECDF_TEST_POSTGRES"

// BaseDSN returns the DSN of FEDECDF_TEST_POSTGRES, skipping t without
// it (failing it under CI=true), and holds the cluster's shared lock
// until t ends, so that no test of another process restarts it
// meanwhile (Restart).
func BaseDSN(t testing.TB) string {
	t.Helper()
	dsn := Env(t, EnvDSN, "the PostgreSQL tests did not run (README, \"Running a server on PostgreSQL\", starts a throwaway cluster)")
	holdShared(t, dsn)
	return dsn
}

// Env returns the environment variable name, skipping t if it is not
// set (failing it under CI=true), saying why: what.
func Env(t testing.TB, name, what string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		msg := name + " is not set: " + what
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: " + msg)
		}
		t.Skip(msg)
	}
	return v
}

// Schema creates a schema of its own for t in the test database and
// returns a DSN whose connections use it (search_path); the schema is
// dropped when t ends.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := BaseDSN(t)
	var b [6]byte
	rand.Read(b[:])
	name := "fedecdf_t_" + hex.EncodeToString(b[:])
	Exec(t, dsn, `CREATE SCHEMA `+name)
	t.Cleanup(func() { Exec(t, dsn, `DROP SCHEMA `+name+` CASCADE`) })
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + name
}

// Exec runs sql (statements without arguments) on the database of dsn.
func Exec(t testing.TB, dsn, sql string) {
	t.Helper()
	withConn(t, dsn, sql, func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, sql)
		return err
	})
}

// QueryRow runs sql, a query of one row without arguments, on the
// database of dsn and scans its row into dest.
func QueryRow(t testing.TB, dsn, sql string, dest ...any) {
	t.Helper()
	withConn(t, dsn, sql, func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, sql).Scan(dest...)
	})
}

// withConn runs fn on a new connection to the database of dsn, failing
// t (naming sql) on an error.
func withConn(t testing.TB, dsn, sql string, fn func(context.Context, *pgx.Conn) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := fn(ctx, conn); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
