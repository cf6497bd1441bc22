package store

import (
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// maxBatch caps the writes committed in one transaction, so that one
// commit (and the wait of the first write in it) stays short.
const maxBatch = 1024

// ErrClosed is returned by PutReport and SaveVerdicts after Close.
var ErrClosed = errors.New("store closed")

// write is one PutReport or SaveVerdicts waiting for the commit that
// covers it: a report (id, upload, received) or, if verdicts is not
// nil, a stage's verdict records.
type write struct {
	dataset  string
	id       payload.ReportID
	upload   []byte
	received time.Time // when PutReport was called
	verdicts map[payload.ReportID][]byte
	done     chan error // buffered: the committer never blocks on it
}

// committer is the group commit of reports and verdicts: PutReport and
// SaveVerdicts queue a write and wait; one goroutine takes every write
// queued, appends them in one transaction (one fdatasync), and only then
// answers each. There is no timer: a write arriving at an idle store is
// committed at once, and the writes arriving during a commit form the
// next batch, so the batch size follows the load.
type committer struct {
	mu      sync.RWMutex // guards closed against sends on a closed queue
	closed  bool
	queue   chan *write
	stopped chan struct{}
	// commit commits a batch and answers each of its writes (the
	// bbolt Store's commitBatch, or the PostgreSQL store's).
	commit func(batch []*write)
}

var donePool = sync.Pool{New: func() any { return make(chan error, 1) }}

// startCommitter starts a group commit committing its batches with
// commit.
func startCommitter(commit func(batch []*write)) *committer {
	c := &committer{queue: make(chan *write, maxBatch), stopped: make(chan struct{}), commit: commit}
	go c.loop()
	return c
}

// startCommitter starts the group commit of s.
func (s *Store) startCommitter() { s.c = startCommitter(s.commitBatch) }

// stop refuses new writes, commits those queued and waits for the
// committer to end.
func (c *committer) stop() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	<-c.stopped
}

// stopCommitter refuses new writes, commits those queued and waits for
// the committer to end.
func (s *Store) stopCommitter() { s.c.stop() }

// PutReport records the upload of report id to dataset, and the time it
// was first recorded (ReceivedAt), and returns once the transaction
// holding it is committed and fsynced: concurrent calls share one
// transaction (group commit), so a caller that acknowledges the report
// after PutReport returns nil never acknowledges a report a crash could
// lose. Writing the same report again writes nothing and keeps the first
// upload and its time; it too returns only once that first one is
// durable. A quarantined report is refused (ErrQuarantined).
func (s *Store) PutReport(dataset string, id payload.ReportID, upload []byte) error {
	if s.Quarantined(dataset, id) {
		return fmt.Errorf("store: recording report %v of dataset %q: %w", id, dataset, ErrQuarantined)
	}
	if err := s.enqueue(&write{dataset: dataset, id: id, upload: upload, received: time.Now()}); err != nil {
		return fmt.Errorf("store: recording report %v of dataset %q: %w", id, dataset, err)
	}
	return nil
}

// enqueue hands w to the committer and waits for the commit covering
// it; a report recorded already is durable, and needs no commit.
func (s *Store) enqueue(w *write) error {
	return s.c.enqueue(w, func() bool { return w.verdicts == nil && s.index.seq(w.dataset, w.id) != 0 })
}

// enqueue hands w to the committer and waits for the commit covering
// it, unless durable (called once the committer is known open) says
// that w is durable already.
func (c *committer) enqueue(w *write, durable func() bool) error {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	if durable() {
		c.mu.RUnlock()
		return nil
	}
	w.done = donePool.Get().(chan error)
	c.queue <- w
	c.mu.RUnlock()
	err := <-w.done
	donePool.Put(w.done)
	return err
}

// loop commits the queued writes in batches until the queue is closed
// and empty.
func (c *committer) loop() {
	defer close(c.stopped)
	batch := make([]*write, 0, maxBatch)
	for w := range c.queue {
		batch = append(batch[:0], w)
	drain:
		for len(batch) < maxBatch {
			select {
			case w, ok := <-c.queue:
				if !ok {
					break drain
				}
				batch = append(batch, w)
			default:
				break drain
			}
		}
		c.commit(batch)
	}
}

// commitBatch appends batch in one transaction, in queue order (a later
// verdict of a report after an earlier one), and answers each write with
// its outcome. If the transaction fails, each write is retried in a
// transaction of its own, so that one bad write fails only itself.
func (s *Store) commitBatch(batch []*write) {
	s.writing.Lock()
	added := make(map[indexKey]uint64)
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, w := range batch {
			if err := s.append(tx, w, added); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.index.add(added)
	}
	s.writing.Unlock()
	if err != nil && len(batch) > 1 {
		for _, w := range batch {
			s.commitBatch([]*write{w})
		}
		return
	}
	for _, w := range batch {
		w.done <- err
	}
}

// append appends w's records within tx; a report recorded already, or
// earlier in the transaction (added), is not written again.
func (s *Store) append(tx *bolt.Tx, w *write, added map[indexKey]uint64) error {
	if w.verdicts != nil {
		for id, rec := range w.verdicts {
			if _, err := appendRecord(tx, verdictsBucket, w.dataset, idRecord(w.dataset, id, rec)); err != nil {
				return err
			}
		}
		return nil
	}
	k := indexKey{w.dataset, w.id}
	if added[k] != 0 || s.index.seq(w.dataset, w.id) != 0 {
		return nil
	}
	seq, err := appendRecord(tx, reportsBucket, w.dataset, reportRecord(w.dataset, w.id, w.received, w.upload))
	added[k] = seq
	return err
}
