package main

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"

	"github.com/fedecdf/fedecdf/server"
	"github.com/fedecdf/fedecdf/simulate"
)

// runSimulation is simulate.Run under the process's memory policy: for
// the dcf backend, a memoryCap from the first phase after the upload,
// restored when the run returns.
func runSimulation(ctx context.Context, cfg simulate.Config) (*simulate.Report, error) {
	if cfg.Backend != string(server.DCF) {
		return simulate.Run(ctx, cfg)
	}
	p := &memoryPhases{next: cfg.Progress}
	defer p.restore()
	cfg.Progress = p
	return simulate.Run(ctx, cfg)
}

// uploadPhases are the phases of simulate.Run up to and including the
// upload: the cap starts with the first phase after them.
var uploadPhases = map[string]bool{"data": true, "setup": true, "upload": true}

// memoryPhases is a simulate.Progress that applies the memory cap at the
// start of each phase after the upload, then passes the phase on.
type memoryPhases struct {
	next simulate.Progress // nil: none
	cap  *memoryCap
}

func (p *memoryPhases) Start(phase string, total int) {
	switch {
	case uploadPhases[phase]:
	case p.cap == nil:
		p.cap = newMemoryCap()
	default:
		p.cap.update()
	}
	if p.next != nil {
		p.next.Start(phase, total)
	}
}

func (p *memoryPhases) Add(k int) {
	if p.next != nil {
		p.next.Add(k)
	}
}

func (p *memoryPhases) Finish() {
	if p.next != nil {
		p.next.Finish()
	}
}

// restore puts back the process's limit if the cap was set.
func (p *memoryPhases) restore() {
	if p.cap != nil {
		p.cap.restore()
	}
}

// lateMemoryFloor is the least soft memory limit a memoryCap sets:
// below it Go's default collector already keeps a run small, and a
// limit near a small live heap would make it collect far too often.
const lateMemoryFloor = 256 << 20

// memoryCap holds the heap near what is live in the phases after the
// upload of the dcf backend (runSimulation). The heap then holds every party, the
// servers' aggregates and report IDs, and grows only with each
// release's agreed report list and the analysis; Go's default collector
// lets it reach twice what is live, keeping freed memory besides
// (≈ 1.2 GiB at 10⁶ parties). Unless the process has a memory limit
// (GOMEMLIMIT, debug.SetMemoryLimit), the cap sets a soft limit of twice
// the heap live after the upload (at least lateMemoryFloor), so that the
// collector and the scavenger keep the later phases near it, and raises
// it at the start of a phase to 1.5× the heap live then if that is
// more: the collector keeps room to work in when releases and the
// analysis add to the live heap. A phase that outgrew the limit would
// only make the collector run more often (the runtime bounds its share
// of the CPU).
type memoryCap struct {
	owned bool  // the process had no limit: the cap sets and restores it
	old   int64 // the limit to restore
	limit int64
}

// newMemoryCap returns to the operating system what the upload freed
// and sets the limit.
func newMemoryCap() *memoryCap {
	debug.FreeOSMemory()
	m := &memoryCap{old: debug.SetMemoryLimit(-1)}
	m.owned = m.old == math.MaxInt64
	if m.owned {
		m.limit = max(2*liveHeap(), lateMemoryFloor)
		debug.SetMemoryLimit(m.limit)
	}
	return m
}

// update raises the limit to 1.5× the heap live at the last collection
// when that is more.
func (m *memoryCap) update() {
	if live := liveHeap(); m.owned && live+live/2 > m.limit {
		m.limit = live + live/2
		debug.SetMemoryLimit(m.limit)
	}
}

// liveHeap returns the bytes of heap objects live at the last
// collection.
func liveHeap() int64 {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	return int64(live[0].Value.Uint64())
}

// restore puts back the process's limit.
func (m *memoryCap) restore() {
	if m.owned {
		debug.SetMemoryLimit(m.old)
	}
}
