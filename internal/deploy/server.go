package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/ledger"
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
	// AcceptBudgetChange lets the server start on a store whose ledger
	// charged releases under another total budget than the manifest's
	// (logged at WARN with both); without it such a start is refused
	// (ErrBudgetChanged).
	AcceptBudgetChange bool
	// PeerCheck is the interval at which the leader exchanges manifest
	// digests with the helper, until it first reaches it and then to
	// notice a helper restarted on another manifest (30 s if 0).
	PeerCheck time.Duration
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
	stop  chan struct{} // closed by Close: ends watchHelper
	done  chan struct{} // closed when watchHelper returns
	once  sync.Once     // closes stop
}

// StartServer opens the store, restores the releases (with their noise
// seeds) and replays the reports it holds into a fresh server, and
// starts serving.
func StartServer(cfg ServerConfig) (*Server, error) {
	m := cfg.Manifest
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Progress == 0 {
		cfg.Progress = 10 * time.Second
	}
	if cfg.PeerCheck == 0 {
		cfg.PeerCheck = 30 * time.Second
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("role", cfg.Role.String()), stop: make(chan struct{}), done: make(chan struct{})}
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
	if err := s.checkBudget(dataset.Budget); err != nil {
		s.store.Close()
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
		Ledger: s.store, Releases: s.store, Datasets: []server.Dataset{dataset}, Manifest: m.Digests(),
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
		s.host.Handle(p2p.QueryProtocol, m.analystNames(), s.handleRelease)
		if relay {
			s.host.Handle(p2p.RelayProtocol, nil, s.handleRelayed)
		}
	} else {
		s.host.Handle(p2p.PeerProtocol, []transport.PeerID{LeaderName}, s.handleRelease)
		if relay {
			s.host.Handle(p2p.SealedProtocol, []transport.PeerID{LeaderName}, s.handleSealed)
		}
	}
	s.log.Info("serving", "peer_id", s.host.ID().String(), "addrs", fmt.Sprint(s.host.Addrs()), "dataset", m.Dataset)
	if cfg.Role == server.Helper {
		close(s.done)
		return s, nil
	}
	if err := s.firstContact(); err != nil {
		close(s.done)
		s.Close()
		return nil, err
	}
	go s.watchHelper()
	return s, nil
}

// checkBudget compares the manifest's total budget with the one the
// store's ledger is kept under, and records the manifest's: a new store
// or an equal budget passes, and so does another one over a ledger that
// has charged nothing yet (logged); over one that has, another budget is
// refused (ErrBudgetChanged) unless the operator accepts the change
// (ServerConfig.AcceptBudgetChange), which is logged at WARN with the
// old and the new budget and what is spent.
func (s *Server) checkBudget(want ledger.Budget) error {
	name := s.cfg.Manifest.Dataset
	old, found, err := s.store.Total(name)
	if err != nil || (found && old == want) {
		return err
	}
	spent, err := s.store.Spent(name)
	if err != nil {
		return err
	}
	attrs := []any{"dataset", name, "old_epsilon", old.Epsilon, "old_delta", old.Delta, "new_epsilon", want.Epsilon, "new_delta", want.Delta, "spent_epsilon", spent.Epsilon, "spent_delta", spent.Delta}
	switch {
	case found && spent != (ledger.Budget{}) && !s.cfg.AcceptBudgetChange:
		return fmt.Errorf("%s: dataset %q: %w: the manifest's total budget ε=%g, δ=%g is not the ε=%g, δ=%g the ledger in %s has spent ε=%g, δ=%g under; if the change is intended, start the server with --accept-budget-change (both servers run the same manifest, so both need it); otherwise start it on the manifest the store was started with", s.name, name, ErrBudgetChanged, want.Epsilon, want.Delta, old.Epsilon, old.Delta, s.cfg.Store, spent.Epsilon, spent.Delta)
	case found && spent != (ledger.Budget{}):
		s.log.Warn("total budget changed by --accept-budget-change", attrs...)
	case found:
		s.log.Info("total budget changed before any release was charged", attrs...)
	}
	return s.store.SetTotal(name, want)
}

// firstContact exchanges manifest digests with the helper when the
// leader starts: a mismatch is refused (the leader does not start), an
// unreachable helper logged, to be checked again by watchHelper.
func (s *Server) firstContact() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.PeerCheck)
	defer cancel()
	err := s.srv.CheckPeer(ctx)
	switch {
	case errors.Is(err, server.ErrManifestMismatch):
		return err
	case err != nil:
		s.log.Warn("helper not reachable yet: the manifest check and any pending release wait for it", "err", err)
	default:
		s.log.Info("the helper runs the same manifest")
		s.resolvePending()
	}
	return nil
}

// watchHelper exchanges manifest digests with the helper every
// PeerCheck, logging each change (unreachable, mismatch, agreed) and
// resolving pending releases once the helper agrees, until Close.
func (s *Server) watchHelper() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.PeerCheck)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.PeerCheck)
		err := s.srv.CheckPeer(ctx)
		cancel()
		state := "agreed"
		if err != nil {
			state = err.Error()
		}
		if state != last {
			switch {
			case errors.Is(err, server.ErrManifestMismatch):
				s.log.Error("refusing to serve: the helper runs another manifest", "err", err)
			case err != nil:
				s.log.Warn("helper not reachable", "err", err)
			default:
				s.log.Info("the helper runs the same manifest")
			}
		}
		last = state
		if err == nil {
			s.resolvePending()
		}
	}
}

// resolvePending completes or aborts the leader's pending releases.
func (s *Server) resolvePending() {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.PeerCheck)
	defer cancel()
	if err := s.srv.ResolvePending(ctx); err != nil {
		s.log.Warn("pending releases not resolved yet", "err", err)
	}
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

// Close stops serving, waits for running requests and closes the store.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	err := s.host.Close()
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
		return errorResponse("%s: malformed report: %v", s.name, err)
	}
	up, ok := msg.(*protocol.Upload)
	if !ok {
		return errorResponse("%s: %T is not a report", s.name, msg)
	}
	resp := s.srv.Handle(ctx, from, req)
	ack, err := protocol.Decode(resp)
	if _, isAck := ack.(*protocol.Ack); err != nil || !isAck {
		return resp
	}
	if err := s.store.PutReport(up.Dataset, up.Report, req); err != nil {
		s.log.Error("could not persist a report", "report", up.Report.String(), "err", err)
		return errorResponse("%s: report %v not stored: %v", s.name, up.Report, err)
	}
	s.log.Debug("report accepted", "report", up.Report.String(), "duplicate", ack.(*protocol.Ack).Duplicate)
	return resp
}

// handleRelease serves release creation and queries (from the analysts
// at the leader, from the leader at the helper), logging a progress line
// while a query is evaluated.
func (s *Server) handleRelease(ctx context.Context, from transport.PeerID, req []byte) []byte {
	msg, err := protocol.Decode(req)
	if err != nil {
		return errorResponse("%s: malformed request: %v", s.name, err)
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
		s.log.Info("release request", "from", from, "release", m.Release.String(), "result", describe(resp))
		return resp
	case *protocol.Query:
		return s.evaluate(ctx, from, m, req)
	}
	return errorResponse("%s: %T is not a release or query request", s.name, msg)
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
	s.log.Info("query answered", "release", m.Release.String(), "seconds", time.Since(start).Seconds(), "result", describe(resp))
	return resp
}

// describe summarises a response for the log.
func describe(resp []byte) string {
	msg, err := protocol.Decode(resp)
	if err != nil {
		return "malformed"
	}
	if e, ok := msg.(*protocol.Error); ok {
		return "error: " + e.Text
	}
	return "ok"
}
