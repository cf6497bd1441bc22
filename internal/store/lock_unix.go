//go:build !windows && !plan9 && !solaris && !aix && !android

package store

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile opens the file at path and takes the exclusive lock bbolt
// takes (flock), waiting at most timeout; nil, nil if there is no file.
// Closing the file releases the lock.
func lockFile(path string, timeout time.Duration) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, errLocked
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mapFile maps the file's size bytes read-only (nil if it cannot); unmap
// releases the mapping.
func mapFile(f *os.File, size int64) (b []byte, unmap func()) {
	if size <= 0 || int64(int(size)) != size {
		return nil, func() {}
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, func() {}
	}
	return b, func() { _ = syscall.Munmap(b) }
}
