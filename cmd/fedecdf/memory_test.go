package main

import (
	"context"
	"math"
	"runtime/debug"
	"testing"

	"github.com/fedecdf/fedecdf/simulate"
)

// TestRunRestoresMemoryLimit: runSimulation sets a soft memory limit after the
// upload of the dcf backend, of at least lateMemoryFloor, only when the
// process has none, and restores it; a limit the process set is left
// alone.
func TestRunRestoresMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		backend string
		set     int64
		lowered bool
	}{{"dcf", math.MaxInt64, true}, {"dcf", 3 << 30, false}, {"additive", math.MaxInt64, false}} {
		seen := &memoryLimitAt{phase: "release"}
		cfg := simulate.Config{Parties: 50, Backend: tc.backend, Epsilon: 1, ECDFShare: 0.5, Mechanism: "tree", Bins: 16, Max: 1, Seed: 1, Bootstrap: -1, IntervalDraws: -1, Progress: seen}
		old := debug.SetMemoryLimit(tc.set)
		_, err := runSimulation(context.Background(), cfg)
		after := debug.SetMemoryLimit(old)
		want := seen.limit == tc.set
		if tc.lowered {
			want = seen.limit >= lateMemoryFloor && seen.limit < tc.set
		}
		if after != tc.set || !want || err != nil {
			t.Errorf("%s: memory limit %d before Run, %d in its release phase, %d after (error %v)", tc.backend, tc.set, seen.limit, after, err)
		}
	}
}

// memoryLimitAt is a Progress that reads the soft memory limit when
// phase starts.
type memoryLimitAt struct {
	phase string
	limit int64
}

func (m *memoryLimitAt) Start(phase string, _ int) {
	if phase == m.phase {
		m.limit = debug.SetMemoryLimit(-1)
	}
}

func (m *memoryLimitAt) Add(int) {}
func (m *memoryLimitAt) Finish() {}

// TestMemoryCapOnlyRaises: at the start of a phase the cap raises the
// limit to 1.5× the live heap when that is more, and never lowers it.
func TestMemoryCapOnlyRaises(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	m := &memoryCap{owned: true, limit: 1}
	before := liveHeap()
	m.update()
	after := liveHeap() // a collection in between changes what is live
	if m.limit != before+before/2 && m.limit != after+after/2 || debug.SetMemoryLimit(-1) != m.limit {
		t.Errorf("limit %d (process %d) after a phase start with %d B live, want 1.5× that", m.limit, debug.SetMemoryLimit(-1), after)
	}
	high := int64(1) << 50
	m.limit = high
	m.update()
	if m.limit != high {
		t.Errorf("limit %d after a phase start, want %d kept", m.limit, high)
	}
}
