//go:build unix

package cpuclock

import (
	"syscall"
	"time"
)

// Process returns the CPU time (user and system) the process has used
// so far, over all its threads: getrusage(RUSAGE_SELF).
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
