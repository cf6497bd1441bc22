package deploy

// Server process, requests: how a running server answers the requests
// its listeners receive (handleReport, handleRelease, evaluate) and logs
// their outcome.

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

func errorResponse(format string, args ...any) []byte {
	return protocol.Encode(protocol.Refusalf(format, args...))
}

// quarantiner is a store that sets reports aside (store.Quarantine).
type quarantiner interface {
	Quarantined(dataset string, id payload.ReportID) bool
}

// handleReport accepts an upload: the server checks it, the store makes
// it durable, and only then is it acknowledged. If the store fails (a
// PostgreSQL store that lost its database) it returns nil: the upload
// is not answered, and the party retries it as it would a server that
// is down. A duplicate is written
// again (harmlessly) so that its acknowledgement, too, follows durability.
func (s *Server) handleReport(ctx context.Context, from transport.PeerID, req []byte) []byte {
	msg, err := protocol.Decode(req)
	if err != nil {
		return s.refuseReport(from, "", fmt.Sprintf("malformed report: %v", err))
	}
	up, ok := msg.(*protocol.Upload)
	if !ok {
		return s.refuseReport(from, "", fmt.Sprintf("%T is not a report", msg))
	}
	if q, ok := any(s.store).(quarantiner); ok && q.Quarantined(up.Dataset, up.Report) {
		return s.refuseReport(from, up.Report.String(), fmt.Sprintf("report %v refused: %v by the operator", up.Report, store.ErrQuarantined))
	}
	resp := s.srv.Handle(ctx, from, req)
	reply, err := protocol.Decode(resp)
	if err != nil {
		reply = protocol.Refusalf("%s: undecodable answer to an upload: %w", s.name, err)
	}
	ack, isAck := reply.(*protocol.Ack)
	if !isAck {
		s.counters.rejected.Add(1)
		s.log.Warn("report refused", "from", from, "report", up.Report.String(), "reason", describeMessage(reply))
		return protocol.Encode(reply)
	}
	if err := s.store.PutReport(up.Dataset, up.Report, req); err != nil {
		s.counters.rejected.Add(1)
		s.log.Error("could not persist a report", "report", up.Report.String(), "err", err)
		return nil // no answer: the party retries, as when the server is down
	}
	s.srv.Stored(up.Dataset, up.Report)
	dup := ack.Duplicate
	if dup {
		s.counters.duplicates.Add(1)
	} else {
		s.counters.accepted.Add(1)
	}
	s.log.Debug("report accepted", "from", from, "report", up.Report.String(), "duplicate", dup)
	return resp
}

// refuseReport counts and logs a refused upload and returns the refusal.
func (s *Server) refuseReport(from transport.PeerID, report, reason string) []byte {
	s.counters.rejected.Add(1)
	s.log.Warn("report refused", "from", from, "report", report, "reason", reason)
	return errorResponse("%s: %s", s.name, reason)
}

// handleRelease serves release creation and queries (from the analysts
// at the leader, from the leader at the helper), logging a progress line
// while a query is evaluated, the manifest digests and the verification
// exchange (additive backend) and the ledger checks the leader sends
// the helper, and status
// requests (from the analysts and operators at the
// leader, from the leader at the helper); an operator may ask for status
// only.
func (s *Server) handleRelease(ctx context.Context, from transport.PeerID, req []byte) []byte {
	msg, err := protocol.Decode(req)
	if err != nil {
		return errorResponse("%s: malformed request: %w", s.name, err)
	}
	if s.cfg.Role == server.Helper {
		s.peer.set(nil) // the leader reaches the helper
	}
	if _, isStatus := msg.(*protocol.StatusRequest); !isStatus && slices.Contains(s.cfg.Manifest.OperatorNames(), from) {
		s.log.Warn("refused an operator's request", "from", from, "request", fmt.Sprintf("%T", msg))
		return errorResponse("%s: %s may ask for status only: it is an operator of the manifest, not an analyst", s.name, from)
	}
	switch msg.(type) {
	case *protocol.CreateRelease, *protocol.Prepare, *protocol.StatusRequest:
		// Count every report any process of the role committed before.
		s.catchUpOrLog()
	}
	switch m := msg.(type) {
	case *protocol.ManifestDigest:
		resp := s.srv.Handle(ctx, from, req)
		if err := s.srv.ManifestMismatch(); err != nil && s.cfg.Role == server.Helper {
			s.log.Error("refusing to serve: the leader runs another manifest", "err", err)
		}
		return resp
	case *protocol.CreateRelease:
		resp := s.srv.Handle(ctx, from, req)
		s.logOutcome(resp, &s.counters.released, &s.counters.releaseRefused, "release created", "release refused", "from", from, "release", m.Release.String())
		return resp
	case *protocol.Query:
		return s.evaluate(ctx, from, m, req)
	case *protocol.StatusRequest:
		return s.handleStatus(ctx, from, m)
	case *protocol.Prepare, *protocol.Decide:
		return s.srv.Handle(ctx, from, req) // the server takes them from the leader only
	case *protocol.LedgerCheck:
		resp := s.srv.Handle(ctx, from, req) // from the leader only
		if back, err := protocol.Decode(resp); err == nil {
			if mine, ok := back.(*protocol.LedgerCheck); ok && mine.Charged != m.Charged {
				s.log.Error("refusing releases: the two ledgers disagree (server.ErrLedgerRewound)", "dataset", m.Dataset, "leader_releases", m.Charged, "helper_releases", mine.Charged)
			}
		}
		return resp
	}
	return errorResponse("%s: %T is not a release, query or status request", s.name, msg)
}

func (s *Server) evaluate(ctx context.Context, from transport.PeerID, m *protocol.Query, req []byte) []byte {
	start := time.Now()
	s.log.Info("evaluating query", "from", from, "release", m.Release.String(), "component", m.Component.String(), "prefixes", len(m.Prefixes))
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(s.cfg.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.log.Info("still evaluating", "release", m.Release.String(), "elapsed", time.Since(start).Round(time.Second).String())
			}
		}
	}()
	resp := s.srv.Handle(ctx, from, req)
	close(done)
	s.logOutcome(resp, &s.counters.answered, &s.counters.queryFailed, "query answered", "query failed", "release", m.Release.String(), "seconds", time.Since(start).Seconds())
	return resp
}

// logOutcome counts a response as ok or failed and logs it: at INFO with
// the ok message, or at WARN with the failed one and the error.
func (s *Server) logOutcome(resp []byte, ok, failed *atomic.Int64, okMsg, failedMsg string, args ...any) {
	result := describe(resp)
	if result == "ok" {
		ok.Add(1)
		s.log.Info(okMsg, args...)
		return
	}
	failed.Add(1)
	s.log.Warn(failedMsg, append(args, "err", result)...)
}

// describe summarises a response for the log.
func describe(resp []byte) string {
	msg, err := protocol.Decode(resp)
	if err != nil {
		return "malformed"
	}
	return describeMessage(msg)
}

// describeMessage is describe for a decoded reply.
func describeMessage(msg protocol.Message) string {
	if e, ok := msg.(*protocol.Error); ok {
		return e.Text
	}
	return "ok"
}
