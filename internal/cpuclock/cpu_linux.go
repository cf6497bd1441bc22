//go:build linux

package cpuclock

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTimeID is Linux's CLOCK_THREAD_CPUTIME_ID: the CPU time
// of the calling thread, to the nanosecond.
const clockThreadCPUTimeID = 3

// Thread returns the CPU time (user and system) the calling OS thread
// has used so far, clock_gettime(CLOCK_THREAD_CPUTIME_ID), and whether
// the platform has such a clock. It times one goroutine's work when the
// goroutine is locked to its thread (runtime.LockOSThread) from before
// the first reading to after the last: no other goroutine runs on that
// thread in between.
func Thread() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
