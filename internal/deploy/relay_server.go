package deploy

import (
	"context"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// handleRelayed is the leader's side of a relayed report: it stores its
// own upload as a direct one, relays the sealed share to the helper, and
// acknowledges only when both servers have stored the report.
func (s *Server) handleRelayed(ctx context.Context, from transport.PeerID, req []byte) []byte {
	rr, err := sealed.ParseRelayedReport(req)
	if err != nil {
		return s.refuseReport(from, "", err.Error())
	}
	return s.relay(ctx, from, rr)
}

// relay stores the leader's upload of rr, relays the helper's sealed
// one and returns the acknowledgement of both, or why not. A standby
// process records its upload for the coordinator (ingest) and relays
// through its dial-only host (shared.go).
func (s *Server) relay(ctx context.Context, from transport.PeerID, rr *sealed.RelayedReport) []byte {
	var host *p2p.Host
	resp, ok := s.asCoordinator(func() []byte {
		host = s.host
		return s.handleReport(ctx, from, rr.Leader)
	})
	if !ok {
		host, resp = s.relayHost, s.ingest(from, rr.Leader)
	}
	mine, err := sealed.DecodeAck(s.name, resp)
	if err != nil {
		return resp
	}
	helperResp, err := host.Conn(p2p.SealedProtocol).Call(ctx, manifest.HelperName, rr.Helper.Marshal())
	if err != nil {
		s.log.Warn("relayed report held by the leader only: cannot reach the helper", "report", rr.Helper.Report.String(), "err", err)
		return errorResponse("%s: report %v: %w: %w", s.name, rr.Helper.Report, sealed.ErrRelayFailed, err)
	}
	theirs, err := sealed.DecodeAck(manifest.HelperName, helperResp)
	if err != nil {
		s.log.Warn("relayed report held by the leader only: the helper refused it", "report", rr.Helper.Report.String(), "err", err)
		return errorResponse("%s: report %v: the helper refused it: %w", s.name, rr.Helper.Report, err)
	}
	return protocol.Encode(&protocol.Ack{Duplicate: mine.Duplicate || theirs.Duplicate})
}

// handleSealed is the helper's side: it opens the sealed upload with its
// HPKE private key and accepts it as a direct one.
func (s *Server) handleSealed(ctx context.Context, from transport.PeerID, req []byte) []byte {
	su, err := sealed.ParseUpload(req)
	if err != nil {
		return s.refuseReport(from, "", err.Error())
	}
	upload, err := su.Open(s.hpkeKey)
	if err != nil {
		return s.refuseReport(from, su.Report.String(), err.Error())
	}
	return s.handleReport(ctx, from, upload)
}
