package deploy

// Losing the lock: a coordinator whose store finds the database's lock
// taken by another process (store.Postgres.Lost: its connection was
// cut, and a standby took over meanwhile) writes nothing more (the
// store refuses its writes, ErrLocked) and demotes itself in place: it
// stops coordinating and stands by again, as a process started while
// another coordinates does, trying to take over again.

import (
	"fmt"

	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/server"
)

// run coordinates (if coordinating) or stands by, in turn, until Close;
// it closes done when it returns.
func (s *Server) run(r roleSetup, coordinating bool) {
	defer close(s.done)
	for {
		if coordinating && !s.coordinateUntilLost(r) {
			return
		}
		if !s.awaitTakeOver(r) {
			return
		}
		coordinating = true
	}
}

// coordinateUntilLost runs the coordinator's loop (at the leader,
// watchHelper) until Close (false) or the store loses its lock, when it
// demotes this process (true; false if it cannot stand by).
func (s *Server) coordinateUntilLost(r roleSetup) bool {
	var lost <-chan struct{}
	if s.shared != nil {
		lost = s.shared.Lost()
	}
	if s.cfg.Role == server.Leader {
		if !s.watchHelper(lost) {
			return false
		}
	} else {
		select {
		case <-s.stop:
			return false
		case <-lost:
		}
	}
	if err := s.demote(r); err != nil {
		s.log.Error("cannot stand by after losing the coordination", "err", err)
		s.fail(err)
		return false
	}
	return true
}

// demote stops coordinating: requests served as the coordinator end
// first (the host closed, the shared listeners' running requests
// waited for), then the operations loops, and the server with its
// reports, releases and ledger is dropped, unwritten; only then does
// the store become a standby's again (store.Postgres.Demote), whose
// writes no longer fail for want of the lock. The process then serves
// what a standby serves (serveStandby).
func (s *Server) demote(r roleSetup) error {
	s.log.Warn("coordination lost: another process took over the role's coordination while this one was cut from the database; standing by", "err", store.ErrLocked)
	s.coord.Lock() // once the requests served as the coordinator on the shared listeners ended
	s.active.Store(false)
	s.coord.Unlock()
	s.cancelOps()
	err := s.host.Close() // waits for the requests it serves
	s.ops.Wait()
	s.host, s.srv, s.cancelOps = nil, nil, func() {}
	s.shared.Demote()
	if err != nil {
		s.log.Warn("closing the coordinator's host", "err", err)
	}
	if err := s.serveStandby(r); err != nil {
		return fmt.Errorf("standing by after losing the coordination: %w", err)
	}
	s.log.Info("standing by: recording sealed uploads", "upload_addr", s.uploadAddr())
	return nil
}

// asCoordinator runs serve while this process coordinates, and
// reports whether it did; demote waits for the serve running.
func (s *Server) asCoordinator(serve func() []byte) ([]byte, bool) {
	s.coord.RLock()
	defer s.coord.RUnlock()
	if !s.active.Load() {
		return nil, false
	}
	return serve(), true
}
