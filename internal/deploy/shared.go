package deploy

// Server process, several per role: processes with the same key,
// manifest and PostgreSQL store serve one role. The first to take the
// database's lock coordinates: it runs the server (verification,
// releases, the ledger, queries, the leader–helper exchange) as a
// single process does. The others stand by: each takes sealed uploads
// on its own address and records them in the database, acknowledging
// after the commit, and tries every TakeOver interval to take the lock;
// the one that gets it (the coordinator stopped, was killed or lost its
// database connection) loads everything from the database, as a
// restarted server does, and coordinates; a coordinator that finds the
// lock taken (its connection was cut meanwhile) stands by again
// (demote.go). The coordinator reads the
// reports the others recorded (catchUp) every TailInterval, and before
// it creates a release, answers a Prepare, or reports its status, so a
// release counts every report committed before it was asked for.
// Every process, coordinating or standing by, also prepares the role's
// verified DCF reports for verification (prepare.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// DefaultTakeOver is how often a standby tries to take over, and
// DefaultTailInterval how often the coordinator reads the reports the
// standbys recorded.
const (
	DefaultTakeOver     = time.Second
	DefaultTailInterval = 500 * time.Millisecond
)

// tailState is where the coordinator's reading of other processes'
// reports stands (store.Postgres.ReportsAfter's cursor).
type tailState struct {
	mu     sync.Mutex
	cursor uint64
}

// openStore opens the configured store: a PostgreSQL database shared
// with the role's other processes (a standby if another coordinates),
// or a bbolt file, of one process.
func (s *Server) openStore() error {
	if !store.IsPostgres(s.cfg.Store) {
		var err error
		s.store, err = store.OpenBackend(s.cfg.Store, s.cfg.StorePasswordFile)
		return err
	}
	p, err := store.OpenPostgresShared(s.cfg.Store, s.cfg.StorePasswordFile)
	if err != nil {
		return err
	}
	s.store, s.shared = p, p
	return nil
}

// standBy serves sealed uploads while another process coordinates the
// role, and waits to take over (run). In a relay deployment a standby
// leader relays the helper's shares over a libp2p host of its own that
// only dials (the helper's coordinator), and a standby helper, which
// parties never reach, only waits.
func (s *Server) standBy(r roleSetup) error {
	relay := s.cfg.Manifest.Upload == manifest.UploadRelay
	if s.uploadListen(r.endpoint) == "" && !(relay && s.cfg.Role == server.Helper) {
		return fmt.Errorf("another process coordinates the %s on this database, and this one, standing by, serves sealed uploads only: give it --upload-listen HOST:PORT (or the %s an upload_addr in the manifest)", s.name, s.name)
	}
	if err := s.serveStandby(r); err != nil {
		return err
	}
	s.log.Info("standing by: another process coordinates the role; recording sealed uploads", "upload_addr", s.uploadAddr(), "dataset", s.cfg.Manifest.Dataset, "version", s.cfg.Version)
	go s.run(r, false)
	return nil
}

// serveStandby starts what a standby serves and this process does not
// serve yet: the checker of the uploads it records, the relay host of
// a relay deployment's leader, the sealed-upload listener and the
// analysts' query host.
func (s *Server) serveStandby(r roleSetup) error {
	if s.checker == nil {
		key, err := sharedVerifyKey(s.cfg.Manifest, s.cfg.Role, s.cfg.Identity)
		if err != nil {
			return err
		}
		if s.checker, err = server.NewUploadChecker(r.dataset, s.cfg.Role, key); err != nil {
			return err
		}
	}
	if s.cfg.Manifest.Upload == manifest.UploadRelay && s.cfg.Role == server.Leader && s.relayHost == nil {
		if err := s.startRelayHost(r); err != nil {
			return err
		}
	}
	if listen := s.uploadListen(r.endpoint); listen != "" && s.uploads == nil {
		if err := s.listenUploads(listen); err != nil {
			return err
		}
	}
	if s.queries == nil {
		return s.listenQueries(r)
	}
	return nil
}

// startRelayHost starts the standby leader's dial-only libp2p host,
// through which it relays the helper's shares of relayed reports.
func (s *Server) startRelayHost(r roleSetup) error {
	tc := s.cfg.Transport
	tc.Key, tc.Self, tc.Listen, tc.Peers, tc.Logger = s.cfg.Identity.Key, s.name, nil, r.book, s.log
	if tc.MaxMessage == 0 {
		tc.MaxMessage = protocol.MaxMessageSize
	}
	h, err := p2p.New(tc)
	if err != nil {
		return fmt.Errorf("the standby's relay host: %w", err)
	}
	s.relayHost = h
	return nil
}

// awaitTakeOver tries to take over every TakeOver interval until it
// does (true: this process coordinates) or Close (false); it fails the
// server (Failed) and returns false if taking over fails.
func (s *Server) awaitTakeOver(r roleSetup) bool {
	t := time.NewTicker(s.cfg.TakeOver)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return false
		case <-t.C:
		}
		took, err := s.shared.TakeOver()
		if err != nil {
			s.log.Warn("standing by: cannot reach the database", "err", err)
		}
		if !took {
			continue
		}
		s.log.Info("taking over: the coordinating process of the role is gone")
		if err := s.coordinate(r); err != nil {
			s.log.Error("taking over failed", "err", err)
			s.fail(err)
			return false
		}
		return true
	}
}

// Failed is sent the error that ended the server's serving on its own:
// a process that could not take over, or could not stand by again
// after losing the database's lock. The process should then exit (a
// supervisor restarting it makes it a standby again).
func (s *Server) Failed() <-chan error { return s.failed }

func (s *Server) fail(err error) {
	select {
	case s.failed <- err:
	default:
	}
}

// holdLock checks that the coordinator still holds the database's lock
// (store.Postgres.Hold), so that it learns of a take-over (run)
// even with nothing to write, and takes its lock back after the
// database restarted. An unreachable database is warned about as
// repeatedWarns says.
func (s *Server) holdLock() {
	err := s.shared.Hold()
	if errors.Is(err, store.ErrLocked) { // lost to another process: run demotes this one
		err = nil
	}
	s.warns.check("the database is not reachable", "the database is reachable again", err)
}

// ingest records the upload pt (checked by the sealed frame's
// checkUpload) for the coordinating process while this one stands by,
// and acknowledges it after the commit; nil (no answer: the party
// retries) if the store fails. It first refuses what the coordinator
// would reject at once (server.UploadChecker: a share that does not
// decode, an upload of another backend), so that a party learns of
// its malformed report at upload, as from the coordinator.
func (s *Server) ingest(from transport.PeerID, pt []byte) []byte {
	msg, err := protocol.Decode(pt)
	if err != nil {
		return s.refuseReport(from, "", fmt.Sprintf("malformed report: %v", err))
	}
	up, ok := msg.(*protocol.Upload)
	switch {
	case !ok:
		return s.refuseReport(from, "", fmt.Sprintf("%T is not a report", msg))
	case up.Dataset != s.cfg.Manifest.Dataset:
		return s.refuseReport(from, up.Report.String(), fmt.Sprintf("report %v is of dataset %q, not of this server's %q", up.Report, up.Dataset, s.cfg.Manifest.Dataset))
	case s.shared.Quarantined(up.Dataset, up.Report):
		return s.refuseReport(from, up.Report.String(), fmt.Sprintf("report %v refused: %v by the operator", up.Report, store.ErrQuarantined))
	}
	if err := s.checker.Check(pt); err != nil {
		s.counters.rejected.Add(1)
		s.log.Warn("report refused", "from", from, "report", up.Report.String(), "reason", err.Error())
		return errorResponse("%w", err) // the codes of err's sentinels, as the coordinator's refusal carries
	}
	if err := s.store.PutReport(up.Dataset, up.Report, pt); err != nil {
		s.counters.rejected.Add(1)
		s.log.Error("could not persist a report", "report", up.Report.String(), "err", err)
		return nil
	}
	s.counters.accepted.Add(1)
	s.log.Debug("report recorded for the coordinating process", "from", from, "report", up.Report.String())
	return protocol.Encode(&protocol.Ack{})
}

// catchUp hands the coordinator's server the reports recorded since its
// last read, by any process of the role (its own come back as
// duplicates), and deletes the uploads of reports it rejected. Nothing
// for a store of one process.
func (s *Server) catchUp() error {
	if s.shared == nil || !s.active.Load() {
		return nil
	}
	n, _, err := s.readNew()
	if n > 0 {
		s.log.Debug("read the reports other processes recorded", "reports", n)
	}
	return err
}

// catchUpOrLog is catchUp, logging its failure (repeatedWarns).
func (s *Server) catchUpOrLog() {
	s.warns.check("reading the reports other processes recorded", "reading the reports other processes recorded again", s.catchUp())
}

// readNew feeds the server the shared store's reports since the cursor,
// deletes the uploads of those it rejected, and returns how many it
// accepted anew and how many it deleted.
func (s *Server) readNew() (n, deleted int, err error) {
	s.tail.mu.Lock()
	defer s.tail.mu.Unlock()
	dataset := s.cfg.Manifest.Dataset
	var rejected []payload.ReportID
	n, rejected, err = s.feed(func(fn func(payload.ReportID, []byte) error) error {
		next, err := s.shared.ReportsAfter(dataset, s.tail.cursor, fn)
		s.tail.cursor = next
		return err
	})
	if len(rejected) > 0 && !s.prepared {
		if _, derr := s.store.DeleteReports(dataset, rejected); derr != nil {
			s.log.Error("deleting the stored uploads of rejected reports (they are skipped again at the next start)", "err", derr)
		}
	}
	return n, len(rejected), err
}

// feed hands the server the stored uploads source calls its function
// with, in chunks whose accepted reports' outputs the server re-derives
// in parallel first (server.Server.PrepareReplay), and returns how many
// it accepted anew and the reports it had rejected finally (their
// uploads need no replay). An upload of a report accepted before that
// is not the one accepted (server.ErrUploadChanged: the store edited,
// or damaged under an intact checksum) is damage (store.ErrDamaged),
// naming the store and the report, to quarantine. An upload the server refuses fails a
// bbolt store's replay (the server acknowledged everything in it); in
// a shared store a standby recorded it unchecked, and it is logged and
// counted as refused.
func (s *Server) feed(source func(fn func(payload.ReportID, []byte) error) error) (n int, rejected []payload.ReportID, err error) {
	dataset := s.cfg.Manifest.Dataset
	chunk := make([]*protocol.Upload, 0, replayChunk)
	raw := make([][]byte, 0, replayChunk)
	flush := func() error {
		skip, err := s.srv.PrepareReplay(dataset, raw)
		if err != nil {
			return fmt.Errorf("store %s: %w: %w", store.Name(s.cfg.Store), store.ErrDamaged, err)
		}
		rejected = append(rejected, skip...)
		for i, up := range chunk {
			if slices.Contains(skip, up.Report) {
				continue
			}
			resp, err := protocol.Decode(s.srv.Handle(context.Background(), "store", raw[i]))
			if err != nil {
				return fmt.Errorf("store: replaying report %v: %w", up.Report, err)
			}
			switch r := resp.(type) {
			case *protocol.Error:
				if s.shared == nil {
					return fmt.Errorf("store: replaying report %v: %s", up.Report, r.Text)
				}
				s.counters.rejected.Add(1)
				s.log.Warn("report refused", "from", "store", "report", up.Report.String(), "reason", r.Text)
				continue
			case *protocol.Ack:
				if !r.Duplicate {
					n++
				}
			}
			s.srv.Stored(dataset, up.Report)
		}
		chunk, raw = chunk[:0], raw[:0]
		return nil
	}
	err = source(func(id payload.ReportID, upload []byte) error {
		up, err := storedUpload(id, upload)
		if err != nil {
			return err
		}
		raw = append(raw, bytes.Clone(upload)) // upload is valid only during the call
		if chunk = append(chunk, up); len(chunk) == replayChunk {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return n, rejected, err
}
