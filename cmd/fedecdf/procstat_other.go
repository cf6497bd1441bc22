//go:build !linux

package main

import (
	"errors"
	"time"
)

// procUsage is what a process has used so far: CPU time (user and
// system) and the bytes it caused to be written to storage.
type procUsage struct {
	cpu     time.Duration
	written int64
}

var errNoProc = errors.New("bench ingest reads the servers' usage from /proc: run it on Linux")

func readProcUsage(int) (procUsage, error) { return procUsage{}, errNoProc }

func loadAverage() (float64, error) { return 0, errNoProc }
