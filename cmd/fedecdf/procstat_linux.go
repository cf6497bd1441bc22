package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// procUsage is what a process has used so far: CPU time (user and
// system) and the bytes it caused to be written to storage.
type procUsage struct {
	cpu     time.Duration
	written int64
}

// userHz is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on
// every Linux architecture Go supports.
const userHz = 100

// readProcUsage reads the usage of process pid from /proc/PID/stat
// (utime, stime) and /proc/PID/io (write_bytes).
func readProcUsage(pid int) (procUsage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procUsage{}, err
	}
	// The fields after the command name, which is in parentheses and
	// may hold spaces: state is field 3, utime 14 and stime 15.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return procUsage{}, fmt.Errorf("/proc/%d/stat: %d fields after the name, want at least 13", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		t, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return procUsage{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += t
	}
	u := procUsage{cpu: time.Duration(ticks) * time.Second / userHz}
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return procUsage{}, err
	}
	for _, line := range strings.Split(string(io), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			if u.written, err = strconv.ParseInt(v, 10, 64); err != nil {
				return procUsage{}, fmt.Errorf("/proc/%d/io: %w", pid, err)
			}
			return u, nil
		}
	}
	return procUsage{}, fmt.Errorf("/proc/%d/io has no write_bytes line", pid)
}

// loadAverage returns the 1-minute load average (/proc/loadavg).
func loadAverage() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg is empty")
	}
	return strconv.ParseFloat(f[0], 64)
}
