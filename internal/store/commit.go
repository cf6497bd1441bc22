package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// maxBatch caps the reports committed in one transaction, so that one
// commit (and the wait of the first report in it) stays short.
const maxBatch = 1024

// ErrClosed is returned by PutReport after Close.
var ErrClosed = errors.New("store closed")

// reportWrite is one PutReport waiting for the commit that covers it.
type reportWrite struct {
	dataset  string
	id       payload.ReportID
	upload   []byte
	received time.Time  // when PutReport was called
	done     chan error // buffered: the committer never blocks on it
}

// committer is the group commit of reports: PutReport queues a write and
// waits; one goroutine takes every write queued, commits them in one
// transaction (one fdatasync), and only then answers each. There is no
// timer: a write arriving at an idle store is committed at once, and the
// writes arriving during a commit form the next batch, so the batch size
// follows the load.
type committer struct {
	mu      sync.RWMutex // guards closed against sends on a closed queue
	closed  bool
	queue   chan *reportWrite
	stopped chan struct{}
}

var donePool = sync.Pool{New: func() any { return make(chan error, 1) }}

// startCommitter starts the group commit of s.
func (s *Store) startCommitter() {
	s.c = &committer{queue: make(chan *reportWrite, maxBatch), stopped: make(chan struct{})}
	go s.commitLoop()
}

// stopCommitter refuses new writes, commits those queued and waits for
// the committer to end.
func (s *Store) stopCommitter() {
	s.c.mu.Lock()
	if !s.c.closed {
		s.c.closed = true
		close(s.c.queue)
	}
	s.c.mu.Unlock()
	<-s.c.stopped
}

// PutReport records the upload of report id to dataset, and the time it
// was first recorded (ReceivedAt), and returns once the transaction
// holding it is committed and fsynced: concurrent calls share one
// transaction (group commit), so a caller that acknowledges the report
// after PutReport returns nil never acknowledges a report a crash could
// lose. Writing the same report again is harmless and keeps that time.
func (s *Store) PutReport(dataset string, id payload.ReportID, upload []byte) error {
	w := &reportWrite{dataset: dataset, id: id, upload: upload, received: time.Now(), done: donePool.Get().(chan error)}
	s.c.mu.RLock()
	if s.c.closed {
		s.c.mu.RUnlock()
		return fmt.Errorf("store: recording report %v of dataset %q: %w", id, dataset, ErrClosed)
	}
	s.c.queue <- w
	s.c.mu.RUnlock()
	err := <-w.done
	donePool.Put(w.done)
	if err != nil {
		return fmt.Errorf("store: recording report %v of dataset %q: %w", id, dataset, err)
	}
	return nil
}

// commitLoop commits the queued writes in batches until the queue is
// closed and empty.
func (s *Store) commitLoop() {
	defer close(s.c.stopped)
	batch := make([]*reportWrite, 0, maxBatch)
	for w := range s.c.queue {
		batch = append(batch[:0], w)
	drain:
		for len(batch) < maxBatch {
			select {
			case w, ok := <-s.c.queue:
				if !ok {
					break drain
				}
				batch = append(batch, w)
			default:
				break drain
			}
		}
		s.commitBatch(batch)
	}
}

// commitBatch writes batch in one transaction and answers each write
// with its outcome. If the transaction fails, each write is retried in
// a transaction of its own, so that one bad write fails only itself.
func (s *Store) commitBatch(batch []*reportWrite) {
	// In key order, the writes walk the B+tree once instead of jumping.
	slices.SortFunc(batch, func(a, b *reportWrite) int {
		if c := bytes.Compare([]byte(a.dataset), []byte(b.dataset)); c != 0 {
			return c
		}
		return bytes.Compare(a.id[:], b.id[:])
	})
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, w := range batch {
			if err := putReport(tx, w); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(batch) > 1 {
		for _, w := range batch {
			s.commitBatch([]*reportWrite{w})
		}
		return
	}
	for _, w := range batch {
		w.done <- err
	}
}

// putReport writes one report, and its receipt time unless it has one,
// within tx.
func putReport(tx *bolt.Tx, w *reportWrite) error {
	b, err := tx.Bucket(reportsBucket).CreateBucketIfNotExists([]byte(w.dataset))
	if err != nil {
		return err
	}
	if err := b.Put(w.id[:], w.upload); err != nil {
		return err
	}
	r, err := tx.Bucket(receivedBucket).CreateBucketIfNotExists([]byte(w.dataset))
	if err != nil || r.Get(w.id[:]) != nil {
		return err
	}
	return r.Put(w.id[:], []byte(w.received.UTC().Format(time.RFC3339Nano)))
}
