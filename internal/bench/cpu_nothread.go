//go:build !linux

package bench

import "time"

// ThreadCPU would return the CPU time of the calling OS thread; this
// platform has no per-thread clock that package syscall reads, so it
// returns false (see the Linux version).
func ThreadCPU() (time.Duration, bool) { return 0, false }
