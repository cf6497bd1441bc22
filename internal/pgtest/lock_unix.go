//go:build unix

package pgtest

import (
	"os"
	"syscall"
	"testing"
)

// lockFile takes f's lock, shared or exclusive, waiting for it (flock:
// a lock already held on f is converted).
func lockFile(t testing.TB, f *os.File, exclusive bool) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err == nil {
			return
		}
		if err != syscall.EINTR {
			t.Fatalf("pgtest: locking the cluster: %v", err)
		}
	}
}
