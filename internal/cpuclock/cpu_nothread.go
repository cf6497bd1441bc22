//go:build !linux

package cpuclock

import "time"

// Thread would return the CPU time of the calling OS thread; this
// platform has no per-thread clock that package syscall reads, so it
// returns false (see the Linux version).
func Thread() (time.Duration, bool) { return 0, false }
