package deploy

// Preparation spread over the processes of a role: every process of a
// role on PostgreSQL, coordinating or standing by, leases batches of
// the role's recorded reports that no process prepared yet
// (store.Postgres.PrepareNext), evaluates and sketches them and folds
// their prefix vectors (server.Preparer), and records that in the lease's
// transaction; the coordinating server verifies from the sketches and
// sums releases from the folds (server.Config.Preparations).

import (
	"time"

	"github.com/fedecdf/fedecdf/server"
)

// prepareBatch is the most reports one lease takes. A process that
// finds fewer waits prepareIdle before looking again, twice as long
// each time it finds none, up to prepareIdleMax: an idle role's
// processes do not poll the database ten times a second each (a
// release prepares what they have not reached, PrepareNow).
const (
	prepareBatch   = 256
	prepareIdle    = 100 * time.Millisecond
	prepareIdleMax = time.Second
)

// startPreparing runs, until Close, this process's share of the role's
// preparation of dataset d's reports: none for a store of one process;
// for a dataset whose reports are not verified DCF ones, the emptying of
// the queue of reports to prepare.
func (s *Server) startPreparing(d server.Dataset) error {
	if s.shared == nil {
		return nil
	}
	if !prepares(d) {
		s.loops.Go(func() { s.drainQueue(d.Name) })
		return nil
	}
	key, err := sharedVerifyKey(s.cfg.Manifest, s.cfg.Role, s.cfg.Identity)
	if err != nil {
		return err
	}
	p, err := server.NewPreparer(d, s.cfg.Role, key)
	if err != nil {
		return err
	}
	s.loops.Go(func() { s.prepare(d.Name, key[:], p) })
	return nil
}

// prepare prepares batches of reports until Close, once the role's
// coordinator recorded the verify key this process derived (a process
// of another manifest or key prepares nothing).
func (s *Server) prepare(dataset string, key []byte, p *server.Preparer) {
	agreed, warned := false, false
	idle := prepareIdle
	for {
		var n int
		var err error
		if !agreed {
			agreed, err = s.shared.VerifyKeyIs(dataset, key)
			if err == nil && !agreed && !warned && !s.shared.Coordinating() {
				s.log.Warn("not preparing reports: the coordinating process has not recorded this process's verify key (another manifest or key?)")
				warned = true
			}
		}
		if agreed {
			n, err = s.shared.PrepareNext(dataset, prepareBatch, p.Prepare)
		}
		s.warns.check("preparing reports", "preparing reports again", err)
		if n == prepareBatch {
			select {
			case <-s.stop:
				return
			default:
				continue
			}
		}
		if n > 0 {
			idle = prepareIdle
		} else {
			idle = min(2*idle, prepareIdleMax)
		}
		select {
		case <-s.stop:
			return
		case <-time.After(idle):
		}
	}
}

// drainQueue empties the queue of reports to prepare of a dataset whose
// reports no process prepares, every second until Close.
func (s *Server) drainQueue(dataset string) {
	for {
		s.warns.check("emptying the queue of reports to prepare", "emptying the queue of reports to prepare again", s.shared.DrainQueue(dataset))
		select {
		case <-s.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// prepares reports whether the processes of a role prepare the reports
// of dataset d: verified DCF ones.
func prepares(d server.Dataset) bool { return d.Backend == server.DCF && !d.Unverified }
