package pgtest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// EnvRestart is the environment variable naming the shell command that
// restarts the test cluster (.ci/run: pg_ctl restart -m fast).
const EnvRestart = "FEDECDF_TEST_POSTGRES_RESTART"

// clusterLock keeps the tests of every test process (go test runs
// packages in parallel) from using the cluster while one of them
// restarts it: a test using it holds a shared lock on a file named
// after the DSN while it runs (BaseDSN), a test restarting it an
// exclusive one (Restart). Tests within a process run one at a time
// (no PostgreSQL test is parallel), so the process holds one lock: n
// tests' shared hold, or the restarting test's exclusive one.
var clusterLock struct {
	sync.Mutex
	f *os.File
	n int
}

// lockPath is the lock file of the cluster of dsn.
func lockPath(dsn string) string {
	h := sha256.Sum256([]byte(dsn))
	return filepath.Join(os.TempDir(), "fedecdf-pgtest-"+hex.EncodeToString(h[:8])+".lock")
}

// holdShared holds the cluster's shared lock while t runs.
func holdShared(t testing.TB, dsn string) {
	l := &clusterLock
	l.Lock()
	defer l.Unlock()
	if l.n == 0 {
		l.f = openLock(t, dsn)
		lockFile(t, l.f, false)
	}
	l.n++
	t.Cleanup(func() {
		l.Lock()
		defer l.Unlock()
		if l.n--; l.n == 0 {
			l.f.Close() // releases the lock
			l.f = nil
		}
	})
}

// Restart returns the command restarting the test cluster
// (FEDECDF_TEST_POSTGRES_RESTART; skipping t without it, failing it
// under CI=true), having taken the cluster's exclusive lock for the
// rest of t: no other test process uses the cluster until t ends. The
// lock file is open: t holds the shared lock (BaseDSN), which the
// exclusive one converts, and back at t's end (its cleanup runs before
// BaseDSN's, which releases it).
func Restart(t testing.TB) string {
	t.Helper()
	cmd := Env(t, EnvRestart, "the command restarting the test's PostgreSQL (.ci/run sets it)")
	BaseDSN(t)
	l := &clusterLock
	l.Lock()
	defer l.Unlock()
	lockFile(t, l.f, true)
	t.Cleanup(func() {
		l.Lock()
		defer l.Unlock()
		lockFile(t, l.f, false)
	})
	return cmd
}

// openLock opens the lock file of the cluster of dsn.
func openLock(t testing.TB, dsn string) *os.File {
	f, err := os.OpenFile(lockPath(dsn), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("pgtest: the cluster's lock file: %v", err)
	}
	return f
}
