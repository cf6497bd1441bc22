package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudflare/circl/kem"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
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
	Identity *manifest.Identity
	Manifest *manifest.Manifest
	Listen   []ma.Multiaddr
	Store    string // bbolt file, or a postgres:// DSN without a password
	// StorePasswordFile, for a postgres:// Store, holds the database
	// password (else PGPASSWORD or ~/.pgpass).
	StorePasswordFile string
	Logger            *slog.Logger
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
	// PeerCheck is the interval at which the leader checks the helper
	// (DefaultPeerCheck if 0): it exchanges manifest digests, until it
	// first reaches it and then to notice a helper restarted on another
	// manifest, then sends the size and digest of its report set
	// (checkReports), logging a warning when it cannot reach it.
	// PeerTimeout bounds each exchange, and the helper's part of fedecdf
	// status (DefaultPeerTimeout if 0).
	PeerCheck, PeerTimeout time.Duration
	// Version is the binary's version, for fedecdf status.
	Version string
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
	// UploadListen is the host:port of the sealed-upload listener
	// (sealed_server.go): the server's upload_addr in the manifest if empty,
	// none if that is empty too.
	UploadListen string
	// QueryListen are the multiaddrs on which a standby process of a
	// shared PostgreSQL store answers analysts' reads of existing
	// releases (standbyquery.go); none: a standby does not listen for
	// analysts. Unlike Listen they are not in the manifest, so that
	// parties and the helper never reach a standby.
	QueryListen []ma.Multiaddr
	// UploadTimeout bounds the reading of a sealed upload's frame and
	// the writing of its answer (DefaultUploadTimeout if 0); UploadConns
	// caps the connections waiting for their frame in all, and the
	// frames handled at once (DefaultUploadConns if 0); UploadLimits
	// admit connections per client address (admission.go).
	UploadTimeout time.Duration
	UploadConns   int
	UploadLimits  UploadLimits
	// TakeOver is how often a standby process (another coordinates the
	// role on its PostgreSQL store: shared.go) tries to take over
	// (DefaultTakeOver if 0).
	TakeOver time.Duration
	// Heartbeat is how often a process on a PostgreSQL store records its
	// state for fedecdf status (processes.go; DefaultHeartbeat if 0).
	Heartbeat time.Duration
}

// Server is a running leader or helper: a libp2p host serving the
// protocol, with the manifest's upload_addr a sealed-upload listener
// (sealed_server.go), a server.Server holding the reports and releases, and a
// store holding everything it acknowledged (reports, the ledger, and the
// secret noise seed of every release).
type Server struct {
	cfg   ServerConfig
	name  transport.PeerID
	host  *p2p.Host
	srv   *server.Server
	store store.Backend
	// shared is the store when it is a PostgreSQL database that several
	// processes of the role may share (shared.go), else nil; active is
	// set once this process coordinates (srv and host set).
	shared *store.Postgres
	active atomic.Bool
	tail   tailState
	// prepared: the role's processes prepare the reports (prepare.go),
	// and the uploads of rejected ones stay stored (a release's sums
	// re-derive those a fold holds).
	prepared bool
	failed   chan error
	log      *slog.Logger
	stop     chan struct{} // closed by Close: ends watchHelper or awaitTakeOver
	done     chan struct{} // closed when watchHelper or awaitTakeOver returns
	once     sync.Once     // closes stop

	started  time.Time
	last     lastErrors
	connLog  connLog
	warns    *repeatedWarns // the periodic checks' warnings
	counters counters
	peer     peerView
	// helperState is the leader's first contact with the helper, as
	// watchHelper's states log it: watchHelper logs only a change.
	helperState string
	orphans     orphanView
	cancelOps   context.CancelFunc // ends the summary and the metrics endpoint
	// ops are the coordinator's operations loops (startOps), which
	// cancelOps ends; loops are the others (heartbeat, preparation).
	ops, loops sync.WaitGroup
	// coord is held (read) by a request served as the coordinator on a
	// listener shared with the standby's role, so that demote waits for
	// it (demote.go).
	coord sync.RWMutex
	// compared is when the periodic check last compared every report ID
	// (watchHelper's goroutine only).
	compared time.Time
	// metricsAddr is the bound address of the metrics endpoint.
	metricsAddr string
	// orphanGrace, if not 0, replaces DefaultOrphanGrace (tests).
	orphanGrace atomic.Int64
	// rejected is what logRejected last logged.
	rejected map[string]int
	// uploads is the sealed-upload listener (nil if none).
	uploads *uploadListener
	// hpkeKey opens the uploads sealed to this server.
	hpkeKey kem.PrivateKey
	// procID names this process in the shared store's list (processes.go).
	procID string
	// checker checks the uploads a standby records, and relayHost, of a
	// standby leader of a relay deployment, relays (shared.go).
	checker   *server.UploadChecker
	relayHost *p2p.Host
	// queries answers analysts' reads while this process stands by
	// (standbyquery.go; nil if it does not listen for them).
	queries *standbyQueries
}

// StartServer opens the store, restores the releases (with their noise
// seeds) and replays the reports it holds into a fresh server, and
// starts serving. A server that fails to start removes the store file
// it created, so a failed first start leaves no empty store behind.
func StartServer(cfg ServerConfig) (*Server, error) {
	_, statErr := os.Stat(cfg.Store)
	s, err := startServer(cfg)
	if err != nil && errors.Is(statErr, os.ErrNotExist) {
		_ = os.Remove(cfg.Store)
	}
	return s, err
}

func startServer(cfg ServerConfig) (*Server, error) {
	m := cfg.Manifest
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg = withOpsDefaults(cfg)
	s := &Server{cfg: cfg, started: time.Now(), stop: make(chan struct{}), done: make(chan struct{}), cancelOps: func() {}, failed: make(chan error, 1)}
	s.log = withLastErrors(cfg.Logger, &s.last).With("role", cfg.Role.String())
	s.warns = newRepeatedWarns(s.log, cfg.Summary)
	self, peerName, endpoint := manifest.LeaderName, manifest.HelperName, m.Leader
	if cfg.Role == server.Helper {
		self, peerName, endpoint = manifest.HelperName, manifest.LeaderName, m.Helper
	}
	s.name = self
	if cfg.Identity.PeerID.String() != endpoint.PeerID {
		return nil, fmt.Errorf("the key's peer ID %s is not the %s's %s in the manifest", cfg.Identity.PeerID, self, endpoint.PeerID)
	}
	book, err := m.Book(true)
	if err != nil {
		return nil, err
	}
	if s.hpkeKey, err = cfg.Identity.HPKEKey(); err != nil {
		return nil, err
	}
	dataset, err := m.ServerDataset()
	if err != nil {
		return nil, err
	}
	if err := s.openStore(); err != nil {
		return nil, err
	}
	if err := s.checkStoreConfig(); err != nil {
		s.store.Close()
		return nil, err
	}
	if err := s.checkBudget(dataset.Budget); err != nil {
		s.store.Close()
		return nil, err
	}
	r := roleSetup{dataset: dataset, book: book, peer: peerName, endpoint: endpoint}
	s.prepared = s.shared != nil && prepares(dataset)
	if s.shared != nil && !s.shared.Coordinating() {
		if err := s.standBy(r); err != nil {
			s.store.Close()
			return nil, err
		}
		if err := s.startPreparing(dataset); err != nil {
			s.Close()
			return nil, err
		}
		s.startHeartbeat()
		return s, nil
	}
	if err := s.coordinate(r); err != nil {
		close(s.done)
		s.Close()
		return nil, err
	}
	if err := s.startPreparing(dataset); err != nil {
		close(s.done)
		s.Close()
		return nil, err
	}
	s.startHeartbeat()
	go s.run(r, true)
	return s, nil
}

// roleSetup is what coordinate needs of the manifest to serve the role.
type roleSetup struct {
	dataset  server.Dataset
	book     map[transport.PeerID]peer.AddrInfo
	peer     transport.PeerID
	endpoint manifest.Endpoint
}

// coordinate starts serving the role: the libp2p host, a server with
// the store's releases and reports replayed, the handlers, the
// sealed-upload listener (unless a standby already runs it), the
// operations loops and, at the leader, the first contact with the
// helper. On error the caller closes the server (Close).
func (s *Server) coordinate(r roleSetup) error {
	cfg, m := s.cfg, s.cfg.Manifest
	tc := cfg.Transport
	tc.Key, tc.Self, tc.Listen, tc.Peers, tc.Logger = cfg.Identity.Key, s.name, cfg.Listen, r.book, s.log
	// An analyst waits on every call to the helper: one that does not
	// answer a connect timeout is reported at once, not after retries.
	tc.StopUnanswered = true
	if tc.MaxMessage == 0 {
		tc.MaxMessage = protocol.MaxMessageSize
	}
	host, err := p2p.New(tc)
	if err != nil {
		return err
	}
	s.host = host
	scfg := server.Config{
		Role: cfg.Role, Peer: r.peer, Conn: s.host.Conn(p2p.PeerProtocol),
		Ledger: s.store, Releases: s.store, Reports: s.store, Datasets: []server.Dataset{r.dataset}, Manifest: manifest.DigestsByName(m.Digests()),
	}
	err = s.verifyKey(&scfg)
	if err == nil {
		s.srv, err = server.New(scfg)
	}
	if err == nil {
		err = s.replay()
	}
	if err != nil {
		return err
	}
	s.active.Store(true)
	s.host.Handle(p2p.ReportProtocol, nil, s.handleReport)
	relay := m.Upload == manifest.UploadRelay
	if cfg.Role == server.Leader {
		s.host.Handle(p2p.QueryProtocol, append(m.AnalystNames(), m.OperatorNames()...), s.handleRelease)
		if relay {
			s.host.Handle(p2p.RelayProtocol, nil, s.handleRelayed)
		}
	} else {
		s.host.Handle(p2p.PeerProtocol, []transport.PeerID{manifest.LeaderName}, s.handleRelease)
		if relay {
			s.host.Handle(p2p.SealedProtocol, []transport.PeerID{manifest.LeaderName}, s.handleSealed)
		}
	}
	if listen := s.uploadListen(r.endpoint); listen != "" && s.uploads == nil {
		if err := s.listenUploads(listen); err != nil {
			return err
		}
	}
	s.log.Info("serving", "peer_id", s.host.ID().String(), "addrs", fmt.Sprint(s.host.Addrs()), "upload_addr", s.uploadAddr(), "dataset", m.Dataset, "version", cfg.Version, "coordinator", s.shared != nil)
	if err := s.startOps(); err != nil {
		return err
	}
	if cfg.Role == server.Helper {
		return nil
	}
	return s.firstContact()
}

// uploadListen is the address of the sealed-upload listener: the
// configured one, else the manifest's ("": none).
func (s *Server) uploadListen(e manifest.Endpoint) string {
	if s.cfg.UploadListen != "" {
		return s.cfg.UploadListen
	}
	return e.UploadAddr
}

// withOpsDefaults fills the unset operations fields of cfg.
func withOpsDefaults(cfg ServerConfig) ServerConfig {
	for _, d := range []struct {
		field *time.Duration
		def   time.Duration
	}{
		{&cfg.Progress, 10 * time.Second}, {&cfg.PeerCheck, DefaultPeerCheck}, {&cfg.PeerTimeout, DefaultPeerTimeout},
		{&cfg.OrphanCheck, DefaultOrphanCheck}, {&cfg.Summary, DefaultSummary}, {&cfg.UploadTimeout, DefaultUploadTimeout},
		{&cfg.TakeOver, DefaultTakeOver}, {&cfg.Heartbeat, DefaultHeartbeat},
	} {
		if *d.field == 0 {
			*d.field = d.def
		}
	}
	if cfg.Version == "" {
		cfg.Version = "(unknown)"
	}
	if cfg.UploadConns <= 0 {
		cfg.UploadConns = DefaultUploadConns
	}
	cfg.UploadLimits = cfg.UploadLimits.withDefaults()
	return cfg
}

// startOps starts the periodic summary and the metrics endpoint, which
// Close stops.
func (s *Server) startOps() error {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancelOps = cancel
	s.summarise(ctx)
	s.every(ctx, connLogWindow, func() { s.connLog.flush(s.log) })
	if s.shared != nil {
		s.every(ctx, DefaultTailInterval, s.catchUpOrLog)
		s.every(ctx, s.cfg.TakeOver, s.holdLock)
	}
	if s.cfg.Role == server.Helper {
		s.every(ctx, s.cfg.PeerCheck, s.logRejected)
	}
	if s.cfg.Metrics != "" {
		return s.serveMetrics(ctx, s.cfg.Metrics)
	}
	return nil
}

// firstContact exchanges manifest digests with the helper when the
// leader starts: a mismatch is refused (the leader does not start), an
// unreachable helper logged, to be checked again by watchHelper.
func (s *Server) firstContact() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.PeerTimeout)
	defer cancel()
	err := s.srv.CheckPeer(ctx)
	// The peer gauge and /readyz from the start, not after a PeerCheck.
	if s.peer.set(err) && err == nil {
		s.logPeer(nil)
	}
	switch {
	case errors.Is(err, server.ErrManifestMismatch):
		return err
	case errors.Is(err, server.ErrLedgerRewound):
		s.peer.set(err)
		s.log.Error("refusing releases: the two ledgers disagree", "err", err)
	case err != nil:
		s.log.Warn("helper not reachable yet: the manifest check and any pending release wait for it", "err", err)
	default:
		s.log.Info("the helper runs the same manifest")
		s.resolvePending()
	}
	s.helperState = helperState(err)
	return nil
}

// helperState names the outcome err of a manifest check with the
// helper, as watchHelper compares them.
func helperState(err error) string {
	if err != nil {
		return err.Error()
	}
	return "agreed"
}

// watchHelper exchanges manifest digests with the helper every
// PeerCheck, logging each change (unreachable, mismatch, agreed) and
// resolving pending releases once the helper agrees, and then checks the
// report sets (checkReports), until Close (false) or lost is closed
// (true: the store lost its lock).
func (s *Server) watchHelper(lost <-chan struct{}) bool {
	t := time.NewTicker(s.cfg.PeerCheck)
	defer t.Stop()
	last := s.helperState
	for {
		select {
		case <-s.stop:
			return false
		case <-lost:
			return true
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.PeerTimeout)
		err := s.srv.CheckPeer(ctx)
		cancel()
		if err == nil {
			s.verifyReports()
			s.checkReports()
		} else {
			s.peer.set(err)
		}
		state := helperState(err)
		if state != last {
			switch {
			case errors.Is(err, server.ErrManifestMismatch):
				s.log.Error("refusing to serve: the helper runs another manifest", "err", err)
			case errors.Is(err, server.ErrLedgerRewound):
				s.log.Error("refusing releases: the two ledgers disagree", "err", err)
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

// verifyKey sets the servers' shared verify key (sharedVerifyKey) and the
// store that keeps the verdicts, after checking that the store's verdicts
// were reached under the same key.
func (s *Server) verifyKey(cfg *server.Config) error {
	m := s.cfg.Manifest
	key, err := sharedVerifyKey(m, s.cfg.Role, s.cfg.Identity)
	if err != nil {
		return err
	}
	if err := s.store.CheckVerifyKey(m.Dataset, key[:]); err != nil {
		return err
	}
	cfg.VerifyKey, cfg.Verdicts = key, s.store
	if s.shared != nil {
		cfg.Preparations = s.shared
	}
	return nil
}

// replayChunk is how many stored uploads replay prepares together.
const replayChunk = 256

// replay feeds the stored uploads to the fresh server (feed). The
// uploads of reports the server rejected are not replayed but deleted
// from the store: their verdicts are stored, and the server refuses
// them if uploaded again. A bare DCF key stored before dcf deployments
// were verified is refused (ErrUnverifiedStore). A shared store is
// read from its first report on (readNew), which sets the cursor of
// the coordinator's later reads.
func (s *Server) replay() error {
	dataset := s.cfg.Manifest.Dataset
	var n, deleted int
	var err error
	if s.shared != nil {
		s.tail.cursor = 0
		n, deleted, err = s.readNew()
	} else {
		var rejected []payload.ReportID
		n, rejected, err = s.feed(func(fn func(payload.ReportID, []byte) error) error { return s.store.Reports(dataset, fn) })
		deleted = len(rejected)
		if err == nil && len(rejected) > 0 {
			if _, err := s.store.DeleteReports(dataset, rejected); err != nil {
				s.log.Error("deleting the stored uploads of rejected reports (they are skipped again at the next start)", "err", err)
			}
		}
	}
	if err != nil {
		return err
	}
	s.log.Info("restored from the store", "reports", n, "rejected_uploads_deleted", deleted)
	for _, err := range s.srv.UnboundReleases(dataset) {
		s.log.Warn("a release is unreadable: the store lost or quarantined reports it was created over", "err", err)
	}
	return nil
}

// storedUpload decodes the stored upload of report id.
func storedUpload(id payload.ReportID, upload []byte) (*protocol.Upload, error) {
	msg, err := protocol.Decode(upload)
	if err != nil {
		return nil, fmt.Errorf("store: replaying report %v: %w", id, err)
	}
	up, ok := msg.(*protocol.Upload)
	switch {
	case !ok:
		return nil, fmt.Errorf("store: replaying report %v: a %T, not an upload", id, msg)
	case len(up.Key) != 0:
		return nil, fmt.Errorf("store: report %v: %w, stored before this deployment's reports were verified (manifest version 2): start the server on a new store file, and have the parties upload again", id, ErrUnverifiedStore)
	}
	return up, nil
}

// ID returns the server's peer ID: its role's, from its identity, the
// same whether this process coordinates the role or stands by.
func (s *Server) ID() peer.ID { return s.cfg.Identity.PeerID }

// Addrs returns the addresses the server listens on as its role's
// coordinator; none while this process stands by (started while another
// process coordinates, or demoted after losing the coordination lock),
// when it has no coordinator's host.
func (s *Server) Addrs() []ma.Multiaddr {
	var addrs []ma.Multiaddr
	s.asCoordinator(func() []byte { // the host is set before active, and dropped after
		addrs = s.host.Addrs()
		return nil
	})
	return addrs
}

// NumReports returns the number of reports the server has made durable.
func (s *Server) NumReports() (int, error) { return s.store.NumReports(s.cfg.Manifest.Dataset) }

// Close stops serving, waits for running requests and closes the store.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	s.cancelOps()
	s.ops.Wait()
	if s.uploads != nil {
		s.uploads.close() // before the host and the store its uploads use
	}
	var err error
	for _, h := range []*p2p.Host{s.host, s.relayHost, s.queries.hostOrNil()} {
		if h != nil {
			err = errors.Join(err, h.Close())
		}
	}
	s.loops.Wait()
	return errors.Join(err, s.store.Close())
}
