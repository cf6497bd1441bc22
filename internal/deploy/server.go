package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// ServerConfig configures one server process.
type ServerConfig struct {
	Role     server.Role
	Identity *Identity
	Manifest *Manifest
	Listen   []ma.Multiaddr
	Store    string // bbolt file
	Logger   *slog.Logger
	// Progress is the interval of the progress line logged while a
	// query is evaluated (10 s if 0).
	Progress time.Duration
	// Transport overrides the timeouts and retries of the host; its Key,
	// Self, Listen, Peers and Logger are set from the fields above.
	Transport p2p.Config
	// Version is the binary's version, for fedecdf status.
	Version string
	// PeerCheck is the interval at which the leader checks that it
	// reaches the helper, logging a warning when it does not
	// (DefaultPeerCheck if 0; negative: never). PeerTimeout bounds one
	// check, and the helper's part of fedecdf status (DefaultPeerTimeout
	// if 0).
	PeerCheck, PeerTimeout time.Duration
	// OrphanCheck is how often at most a periodic check compares every
	// report ID with the helper when the two sets differ, to find the
	// reports only one server holds (DefaultOrphanCheck if 0). fedecdf
	// status always compares.
	OrphanCheck time.Duration
	// PurgeAfter, if positive, purges the reports this server alone
	// holds, found at a comparison, once they were received longer ago
	// than this.
	PurgeAfter time.Duration
	// Summary is the interval of the INFO line summarising uploads,
	// releases and queries, logged when anything happened
	// (DefaultSummary if 0; negative: never).
	Summary time.Duration
	// Metrics, if set, is the TCP address (host:port) of a Prometheus
	// text-format endpoint, /metrics.
	Metrics string
}

// Server is a running leader or helper: a libp2p host serving the
// protocol, a server.Server holding the reports and releases, and a
// store holding everything it acknowledged (reports, the ledger, and the
// secret noise seed of every release).
type Server struct {
	cfg   ServerConfig
	name  transport.PeerID
	host  *p2p.Host
	srv   *server.Server
	store *store.Store
	log   *slog.Logger

	started  time.Time
	last     lastErrors
	counters counters
	peer     peerView
	orphans  orphanView
	stop     context.CancelFunc // ends the periodic checks and the metrics endpoint
	loops    sync.WaitGroup
	// metricsAddr is the bound address of the metrics endpoint.
	metricsAddr string
}

// StartServer opens the store, restores the releases (with their noise
// seeds) and replays the reports it holds into a fresh server, and
// starts serving.
func StartServer(cfg ServerConfig) (*Server, error) {
	m := cfg.Manifest
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg = withOpsDefaults(cfg)
	s := &Server{cfg: cfg, started: time.Now()}
	s.log = withLastErrors(cfg.Logger, &s.last).With("role", cfg.Role.String())
	self, peerName, endpoint := LeaderName, HelperName, m.Leader
	if cfg.Role == server.Helper {
		self, peerName, endpoint = HelperName, LeaderName, m.Helper
	}
	s.name = self
	if cfg.Identity.PeerID.String() != endpoint.PeerID {
		return nil, fmt.Errorf("the key's peer ID %s is not the %s's %s in the manifest", cfg.Identity.PeerID, self, endpoint.PeerID)
	}
	book, err := m.book(true)
	if err != nil {
		return nil, err
	}
	dataset, err := m.serverDataset()
	if err != nil {
		return nil, err
	}
	if s.store, err = store.Open(cfg.Store); err != nil {
		return nil, err
	}
	tc := cfg.Transport
	tc.Key, tc.Self, tc.Listen, tc.Peers, tc.Logger = cfg.Identity.Key, self, cfg.Listen, book, s.log
	if tc.MaxMessage == 0 {
		tc.MaxMessage = protocol.MaxMessageSize
	}
	if s.host, err = p2p.New(tc); err != nil {
		s.store.Close()
		return nil, err
	}
	s.srv, err = server.New(server.Config{
		Role: cfg.Role, Peer: peerName, Conn: s.host.Conn(p2p.PeerProtocol),
		Ledger: s.store, Releases: s.store, Datasets: []server.Dataset{dataset},
	})
	if err == nil {
		err = s.replay()
	}
	if err != nil {
		s.host.Close()
		s.store.Close()
		return nil, err
	}
	s.host.Handle(p2p.ReportProtocol, nil, s.handleReport)
	relay := m.Upload == UploadRelay
	if cfg.Role == server.Leader {
		s.host.Handle(p2p.QueryProtocol, append(m.analystNames(), m.operatorNames()...), s.handleRelease)
		if relay {
			s.host.Handle(p2p.RelayProtocol, nil, s.handleRelayed)
		}
	} else {
		s.host.Handle(p2p.PeerProtocol, []transport.PeerID{LeaderName}, s.handleRelease)
		if relay {
			s.host.Handle(p2p.SealedProtocol, []transport.PeerID{LeaderName}, s.handleSealed)
		}
	}
	if err := s.startOps(); err != nil {
		s.Close()
		return nil, err
	}
	s.log.Info("serving", "peer_id", s.host.ID().String(), "addrs", fmt.Sprint(s.host.Addrs()), "dataset", m.Dataset, "version", cfg.Version)
	return s, nil
}

// withOpsDefaults fills the unset operations fields of cfg.
func withOpsDefaults(cfg ServerConfig) ServerConfig {
	for _, d := range []struct {
		field *time.Duration
		def   time.Duration
	}{
		{&cfg.Progress, 10 * time.Second}, {&cfg.PeerCheck, DefaultPeerCheck}, {&cfg.PeerTimeout, DefaultPeerTimeout},
		{&cfg.OrphanCheck, DefaultOrphanCheck}, {&cfg.Summary, DefaultSummary},
	} {
		if *d.field == 0 {
			*d.field = d.def
		}
	}
	if cfg.Version == "" {
		cfg.Version = "(unknown)"
	}
	return cfg
}

// startOps starts the periodic summary, the leader's checks of the
// helper and the metrics endpoint, which Close stops.
func (s *Server) startOps() error {
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.summarise(ctx)
	if s.cfg.Role == server.Leader {
		s.watchHelper(ctx)
	}
	if s.cfg.Metrics != "" {
		return s.serveMetrics(ctx, s.cfg.Metrics)
	}
	return nil
}

// replay feeds the stored uploads to the fresh server.
func (s *Server) replay() error {
	n := 0
	err := s.store.Reports(s.cfg.Manifest.Dataset, func(id payload.ReportID, upload []byte) error {
		resp, err := protocol.Decode(s.srv.Handle(context.Background(), "store", upload))
		if err == nil {
			if e, isErr := resp.(*protocol.Error); isErr {
				err = errors.New(e.Text)
			}
		}
		if err != nil {
			return fmt.Errorf("store: replaying report %v: %w", id, err)
		}
		n++
		return nil
	})
	if err == nil {
		s.log.Info("restored from the store", "reports", n)
	}
	return err
}

// ID returns the server's peer ID.
func (s *Server) ID() peer.ID { return s.host.ID() }

// Addrs returns the addresses the server listens on.
func (s *Server) Addrs() []ma.Multiaddr { return s.host.Addrs() }

// NumReports returns the number of reports the server has made durable.
func (s *Server) NumReports() (int, error) { return s.store.NumReports(s.cfg.Manifest.Dataset) }

// Close stops serving and the periodic checks, waits for running
// requests and closes the store.
func (s *Server) Close() error {
	s.stop()
	err := s.host.Close()
	s.loops.Wait()
	return errors.Join(err, s.store.Close())
}

func errorResponse(format string, args ...any) []byte {
	return protocol.Encode(&protocol.Error{Text: fmt.Sprintf(format, args...)})
}

// handleReport accepts an upload: the server checks it, the store makes
// it durable, and only then is it acknowledged. A duplicate is written
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
	resp := s.srv.Handle(ctx, from, req)
	ack, err := protocol.Decode(resp)
	if _, isAck := ack.(*protocol.Ack); err != nil || !isAck {
		s.counters.rejected.Add(1)
		s.log.Warn("report refused", "from", from, "report", up.Report.String(), "reason", describe(resp))
		return resp
	}
	if err := s.store.PutReport(up.Dataset, up.Report, req); err != nil {
		s.counters.rejected.Add(1)
		s.log.Error("could not persist a report", "report", up.Report.String(), "err", err)
		return errorResponse("%s: report %v not stored: %v", s.name, up.Report, err)
	}
	dup := ack.(*protocol.Ack).Duplicate
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
// while a query is evaluated.
func (s *Server) handleRelease(ctx context.Context, from transport.PeerID, req []byte) []byte {
	msg, err := protocol.Decode(req)
	if err != nil {
		return errorResponse("%s: malformed request: %v", s.name, err)
	}
	if s.cfg.Role == server.Helper {
		s.peer.set(nil) // the leader reaches the helper
	}
	if _, isStatus := msg.(*protocol.StatusRequest); !isStatus && slices.Contains(s.cfg.Manifest.operatorNames(), from) {
		s.log.Warn("refused an operator's request", "from", from, "request", fmt.Sprintf("%T", msg))
		return errorResponse("%s: %s may ask for status only: it is an operator of the manifest, not an analyst", s.name, from)
	}
	switch m := msg.(type) {
	case *protocol.CreateRelease:
		resp := s.srv.Handle(ctx, from, req)
		s.logOutcome(resp, &s.counters.released, &s.counters.releaseRefused, "release created", "release refused", "from", from, "release", m.Release.String())
		return resp
	case *protocol.Query:
		return s.evaluate(ctx, from, m, req)
	case *protocol.StatusRequest:
		return s.handleStatus(ctx, from, m)
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
	if e, ok := msg.(*protocol.Error); ok {
		return e.Text
	}
	return "ok"
}
