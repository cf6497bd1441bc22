//go:build windows || plan9 || solaris || aix || android

package store

import (
	"errors"
	"os"
	"time"
)

// lockFile opens the file at path (nil, nil if there is none), without a
// lock on this platform: bbolt's own lock follows in Open.
func lockFile(path string, _ time.Duration) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// mapFile does not map the file on this platform: checkFile reads it.
func mapFile(*os.File, int64) ([]byte, func()) { return nil, func() {} }
