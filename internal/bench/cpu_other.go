//go:build !unix

package bench

import "time"

// ProcessCPU returns the CPU time the process has used so far; without
// getrusage it falls back to the wall time since the process started.
func ProcessCPU() time.Duration { return wallClock() }
