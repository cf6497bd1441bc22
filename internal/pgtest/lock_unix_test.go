//go:build unix

package pgtest

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestSharedLockKeepsRestartOut plays another test process that would
// restart the cluster (an exclusive flock on the lock file, without
// waiting) while this one's tests use it: refused while a test holds
// the shared lock, then taken once the test has ended.
func TestSharedLockKeepsRestartOut(t *testing.T) {
	dsn := "postgres://postgres@/postgres?host=/pgtest-lock-test"
	t.Cleanup(func() { os.Remove(lockPath(dsn)) })
	other := func() error {
		f, err := os.OpenFile(lockPath(dsn), os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	t.Run("using the cluster", func(t *testing.T) {
		holdShared(t, dsn)
		holdShared(t, dsn) // a second hold (Schema after BaseDSN) changes nothing
		if err := other(); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("another process's restart took the lock while a test used the cluster: %v", err)
		}
	})
	if err := other(); err != nil {
		t.Errorf("another process's restart could not take the lock after the test ended: %v", err)
	}
}
