//go:build !unix

package cpuclock

import "time"

// Process returns the CPU time the process has used so far; without
// getrusage it falls back to the wall time since the process started.
func Process() time.Duration { return time.Since(processStart) }

// processStart is when the package was initialised.
var processStart = time.Now()
