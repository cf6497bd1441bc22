package server

import (
	"testing"

	"github.com/fedecdf/fedecdf/internal/cpuclock"
)

// TestKeyWalkCPU: the CPU each server reports for walking keys is
// positive once it has folded some, and, read from the walking threads'
// clocks, at most what the whole process used meanwhile.
func TestKeyWalkCPU(t *testing.T) {
	p := newPair(t, DCF, 1<<52, 1, nil)
	scores := make([]float64, foldChunk()+3) // one chunk folded on upload, 3 at the release
	for k := range scores {
		scores[k] = float64(k%bins) / bins
	}
	before := cpuclock.Process()
	p.upload(t, scores...)
	if _, _, err := p.releaseOf(1<<48, allComponents...); err != nil {
		t.Fatal(err)
	}
	process := cpuclock.Process() - before
	var total int64
	for _, s := range []*Server{p.leader, p.helper} {
		cpu, ok := s.KeyWalkCPU()
		if !ok {
			t.Skip("no per-thread CPU clock on this platform")
		}
		if cpu <= 0 {
			t.Errorf("the %s walked %d keys in %v of CPU, want a positive time", s.cfg.Role, s.datasets["d"].fold.evaluated, cpu)
		}
		total += int64(cpu)
	}
	if total > int64(process) {
		t.Errorf("the servers' key walks took %v of CPU, more than the process's %v", total, process)
	}
}
