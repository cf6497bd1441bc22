package server

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/cpuclock"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// ReportStore gives a server back the uploads it accepted, so that it can
// fold a report's key again: the server keeps no keys, only their folded
// sum (see the package doc). Package deploy hands it the store that made
// the uploads durable; nil in Config keeps them in memory.
type ReportStore interface {
	// Uploads calls fn with the encoded protocol.Upload of each of the
	// reports ids of dataset, as accepted, and fails for one it lacks.
	Uploads(dataset string, ids []core.ID, fn func(id core.ID, upload []byte) error) error
}

// ErrReportsNotKept is wrapped by the refusal of a release that needs a
// report's key folded again from a NoReports server.
var ErrReportsNotKept = errcode.New(errcode.ReportsNotKept, "report keys not kept")

// NoReports is the ReportStore of a server that keeps no report at all:
// a release over fewer reports than it holds, which needs the others'
// keys folded again, is refused (ErrReportsNotKept). It suits an
// in-process deployment in which both servers receive every report.
var NoReports ReportStore = noReports{}

type noReports struct{}

func (noReports) Uploads(dataset string, ids []payload.ReportID, _ func(payload.ReportID, []byte) error) error {
	return fmt.Errorf("%w: %d reports of dataset %q would be folded again, but this server keeps no keys (server.NoReports)", ErrReportsNotKept, len(ids), dataset)
}

// memoryReports keeps every accepted upload in memory: the ReportStore
// of a server configured without one. The server hands it each upload it
// accepts (keeper).
type memoryReports map[string]map[payload.ReportID][]byte

// keeper is a ReportStore the server itself fills with what it accepts.
type keeper interface {
	keep(m *protocol.Upload)
}

func (r memoryReports) keep(m *protocol.Upload) {
	if r[m.Dataset] == nil {
		r[m.Dataset] = make(map[payload.ReportID][]byte)
	}
	r[m.Dataset][m.Report] = protocol.Encode(m)
}

func (r memoryReports) Uploads(dataset string, ids []payload.ReportID, fn func(payload.ReportID, []byte) error) error {
	for _, id := range ids {
		b, ok := r[dataset][id]
		if !ok {
			return fmt.Errorf("report %v of dataset %q not kept", id, dataset)
		}
		if err := fn(id, b); err != nil {
			return err
		}
	}
	return nil
}

// dcfBits is the key input length n for a dataset of bins bins.
func dcfBits(bins int) int {
	d, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return 0
	}
	return d.Bits()
}

// walkKeys is the number of keys one goroutine hands fss.SumBatch at a
// time: fss walks up to 64 keys in lockstep on the calling goroutine
// alone, so that the goroutine's thread clock times the whole walk.
const walkKeys = 64

// foldChunk is the number of keys a fold evaluates at once: enough for
// every core to walk a lockstep chunk of walkKeys keys.
func foldChunk() int { return walkKeys * runtime.GOMAXPROCS(0) }

// folded is a DCF dataset's aggregate at one server: its share of
// Σ_reports payload_c·1[bin ≤ j] for every 0-based prefix j and component
// c, over the reports it holds. A report's key is evaluated once, over
// the whole domain, when it is accepted (in chunks of foldChunk keys:
// pending until then), and dropped.
type folded struct {
	dom      fss.PrefixDomain
	prefixes []int    // 0, 1, …, bins−1
	sums     []uint64 // sums[j·NumComponents + c], over the folded keys
	pending  []*fss.Key
	// evaluated counts the keys walked, folding or folding again: what
	// the tests check queries do not add to.
	evaluated int
	// cpu is the CPU time of those walks (KeyWalkCPU).
	cpu walkClock
	// scratch holds one accumulator per walking goroutine.
	scratch [][]uint64
}

func newFolded(bins int) (*folded, error) {
	dom, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return nil, err
	}
	f := &folded{dom: dom, prefixes: make([]int, bins), sums: make([]uint64, bins*payload.NumComponents)}
	for j := range f.prefixes {
		f.prefixes[j] = j
	}
	return f, nil
}

// add folds key into the aggregate (once foldChunk keys are pending).
func (f *folded) add(key *fss.Key) error {
	f.pending = append(f.pending, key)
	if len(f.pending) < foldChunk() {
		return nil
	}
	return f.flush()
}

// flush folds the pending keys.
func (f *folded) flush() error {
	if len(f.pending) == 0 {
		return nil
	}
	err := f.eval(f.pending, f.sums)
	clear(f.pending)
	f.pending = f.pending[:0]
	return err
}

// eval adds the full-domain evaluation of keys to acc: one walk of each
// key's tree, chunks of walkKeys keys walked on up to GOMAXPROCS
// goroutines, each locked to its thread while it walks so that the
// thread's clock times its walks (walkCPU).
func (f *folded) eval(keys []*fss.Key, acc []uint64) error {
	f.evaluated += len(keys)
	chunks := (len(keys) + walkKeys - 1) / walkKeys
	workers := max(1, min(runtime.GOMAXPROCS(0), chunks))
	for len(f.scratch) < workers {
		f.scratch = append(f.scratch, make([]uint64, len(f.sums)))
	}
	var next atomic.Int64
	errs := make([]error, workers)
	work := func(w int) {
		f.cpu.time(func() {
			for c := int(next.Add(1) - 1); c < chunks && errs[w] == nil; c = int(next.Add(1) - 1) {
				errs[w] = f.dom.SumPrefixes(keys[c*walkKeys:min((c+1)*walkKeys, len(keys))], f.prefixes, f.scratch[w])
			}
		})
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { work(w) })
	}
	work(0)
	wg.Wait()
	for _, part := range f.scratch[:workers] {
		for k, v := range part {
			acc[k] += v
		}
		clear(part)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("evaluating %d DCF keys: %w", len(keys), err)
	}
	return nil
}

// walkClock sums the CPU time of key walks from the walking threads' own
// clocks (cpuclock.Thread).
type walkClock struct {
	ns         atomic.Int64
	unmeasured atomic.Bool // a walk ran on a thread without a clock
}

// time runs fn locked to its thread and adds the thread's CPU time over
// it: fn must do all its work on the calling goroutine.
func (c *walkClock) time(fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := cpuclock.Thread()
	fn()
	end, endOK := cpuclock.Thread()
	if !ok || !endOK {
		c.unmeasured.Store(true)
	}
	c.ns.Add(int64(end - start))
}

// KeyWalkCPU returns the CPU time the server has spent walking DCF keys,
// summed over its datasets from the walking threads' own clocks: the
// server's share of a process's CPU that its parties and other peers
// share. For an unverified DCF dataset these are the folds (of reports
// when it accepts them, and again for a release over fewer reports); for
// a verified one, each key's field walk and its sketch when the report is
// verified, and the walk again when a restarted server re-derives an
// accepted report. ok is false when a walk ran on a platform without a
// thread clock (cpuclock.Thread). Keys pending a fold are walked, and
// counted, by the next upload or release.
func (s *Server) KeyWalkCPU() (cpu time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok = true
	for _, d := range s.datasets {
		var c *walkClock
		switch {
		case d.fold != nil:
			c = &d.fold.cpu
		case d.verified != nil:
			if v, isDCF := d.verified.scheme.(*verifiedDCF); isDCF {
				c = &v.cpu
			}
		}
		if c != nil {
			cpu += time.Duration(c.ns.Load())
			ok = ok && !c.unmeasured.Load()
		}
	}
	return cpu, ok
}

// over returns, per component of comps, this server's share of the
// prefix sums over the reports ids (sorted) of release rel, which must
// all be held (checkBound):
// the aggregate minus the held reports outside ids, or ids folded afresh
// when they are fewer (their keys read back from reports, each checked
// against the upload accepted: heldReports.read). Evaluation is
// deterministic and linear, so both give Σ_{ids} of the reports' shares.
func (f *folded) over(held heldReports, ids []payload.ReportID, comps []payload.Component, dataset string, reports ReportStore) (map[payload.Component][]uint64, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	acc := make([]uint64, len(f.sums))
	subtract := len(held)-len(ids) <= len(ids)
	var err error
	switch {
	case subtract && len(held) == len(ids): // every held report is in ids
	case subtract:
		others := outside(held, ids)
		err = f.refold(held, fmt.Sprintf("folding the %d reports not in the release again", len(others)), others, dataset, reports, acc)
	default:
		err = f.refold(held, fmt.Sprintf("folding the release's %d reports again", len(ids)), ids, dataset, reports, acc)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[payload.Component][]uint64, len(comps))
	for _, c := range comps {
		v := make([]uint64, len(f.prefixes))
		for j := range v {
			k := j*payload.NumComponents + int(c)
			if v[j] = acc[k]; subtract {
				v[j] = f.sums[k] - acc[k]
			}
		}
		out[c] = v
	}
	return out, nil
}

// remove subtracts the evaluation of the reports ids, which the caller
// holds (held) and stops holding, from the aggregate, their keys read
// back from reports; on error the aggregate is unchanged.
func (f *folded) remove(held heldReports, ids []payload.ReportID, dataset string, reports ReportStore) error {
	if len(ids) == 0 {
		return nil
	}
	if err := f.flush(); err != nil {
		return err
	}
	acc := make([]uint64, len(f.sums))
	if err := f.refold(held, fmt.Sprintf("dropping %d reports", len(ids)), ids, dataset, reports, acc); err != nil {
		return err
	}
	for k, a := range acc {
		f.sums[k] -= a
	}
	return nil
}

// outside returns the held reports not in ids (sorted).
func outside(held heldReports, ids []payload.ReportID) []payload.ReportID {
	var others []payload.ReportID
	for id := range held {
		if _, in := slices.BinarySearchFunc(ids, id, payload.CompareIDs); !in {
			others = append(others, id)
		}
	}
	slices.SortFunc(others, payload.CompareIDs)
	return others
}

// refold adds to acc the evaluation of the reports ids, held, read back
// from reports in chunks of foldChunk keys and checked against the
// uploads accepted (heldReports.read) for what.
func (f *folded) refold(held heldReports, what string, ids []payload.ReportID, dataset string, reports ReportStore, acc []uint64) error {
	keys := make([]*fss.Key, 0, foldChunk())
	for start := 0; start < len(ids); start += cap(keys) {
		chunk := ids[start:min(start+cap(keys), len(ids))]
		keys = keys[:0]
		err := held.read(reports, dataset, what, chunk, func(up *protocol.Upload) error {
			key, err := fss.Decode(up.Key)
			if err != nil {
				return fmt.Errorf("dataset %q: %s: stored report %v: %w", dataset, what, up.Report, err)
			}
			keys = append(keys, key)
			return nil
		})
		if err == nil && len(keys) != len(chunk) {
			err = fmt.Errorf("dataset %q: %s: %d of %d reports read back", dataset, what, len(keys), len(chunk))
		}
		if err != nil {
			return err
		}
		if err := f.eval(keys, acc); err != nil {
			return err
		}
	}
	return nil
}
