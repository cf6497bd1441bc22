//go:build !unix

package pgtest

import (
	"os"
	"testing"
)

// lockFile does nothing where flock is not available: tests that
// restart the cluster may then meet other test processes' tests.
func lockFile(testing.TB, *os.File, bool) {}
