package cpuclock

import (
	"runtime"
	"testing"
	"time"
)

// TestThread: a goroutine locked to its thread sees its thread clock
// advance with its work, by no more than the process clock
// read around it (getrusage rounds to the microsecond, hence the slack).
func TestThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	process := Process()
	start, ok := Thread()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("no thread clock on Linux")
		}
		t.Skip("no thread clock on this platform")
	}
	x := uint64(1)
	for range 1 << 22 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	end, _ := Thread()
	process = Process() - process
	if d := end - start; d <= 0 || d > process+2*time.Microsecond {
		t.Errorf("thread CPU %v for a loop (result %d), process CPU %v", d, x, process)
	}
}
