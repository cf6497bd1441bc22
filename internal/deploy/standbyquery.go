package deploy

// Standby queries: a standby process of a role on a shared PostgreSQL
// store (shared.go) that is given QueryListen answers analysts' reads of
// existing releases itself, from a server.Server rebuilt from the
// database over a read-only view of the store (readOnlyStore): it holds
// the same release records (seed, report set, mechanism), so it answers
// with the same noise as the coordinator, and it never drives
// verification, charges budget or records a release or a verdict.
// Every other request (a release to create, a pending release to
// resolve, a release the standby does not hold) is refused with
// protocol.ErrStandby, naming the coordinator's libp2p address from the
// processes' heartbeat rows; the analyst's client asks the coordinator
// instead (analyst.NewAnalystAt). A status request is answered from the
// database too (standbyStatus).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// standbyQueries is a standby's libp2p host for analysts and its
// read-only server, built at the first query and rebuilt when a query
// names a release it does not hold, or at a status request, and the
// database holds more releases or another number of reports than when it
// was built (so that queries of made-up release IDs cannot make the
// standby reload the database again and again).
type standbyQueries struct {
	host *p2p.Host
	r    roleSetup
	mu   sync.Mutex
	srv  *server.Server
	// built is what the database held when srv was built.
	built storeSize
}

// storeSize is how many releases the ledger and reports the store hold.
type storeSize struct {
	releases uint64
	reports  int
}

// hostOrNil is q's host, nil if q is.
func (q *standbyQueries) hostOrNil() *p2p.Host {
	if q == nil {
		return nil
	}
	return q.host
}

// listenQueries starts the standby's host for analysts on QueryListen;
// nothing without it.
func (s *Server) listenQueries(r roleSetup) error {
	if len(s.cfg.QueryListen) == 0 {
		return nil
	}
	if s.cfg.Role != server.Leader {
		return fmt.Errorf("deploy: query listen addresses are for the leader's processes: analysts never call the helper")
	}
	tc := s.cfg.Transport
	tc.Key, tc.Self, tc.Listen, tc.Peers, tc.Logger = s.cfg.Identity.Key, s.name, s.cfg.QueryListen, r.book, s.log
	tc.StopUnanswered = true
	if tc.MaxMessage == 0 {
		tc.MaxMessage = protocol.MaxMessageSize
	}
	h, err := p2p.New(tc)
	if err != nil {
		return fmt.Errorf("deploy: the standby's query host: %w", err)
	}
	s.queries = &standbyQueries{host: h, r: r}
	m := s.cfg.Manifest
	h.Handle(p2p.QueryProtocol, append(m.AnalystNames(), m.OperatorNames()...), s.handleStandby)
	s.log.Info("standing by: answering analysts' reads of existing releases", "addrs", fmt.Sprint(h.Addrs()))
	return nil
}

// QueryAddrs are the addresses on which a standby answers analysts'
// reads (none if it does not listen for them).
func (s *Server) QueryAddrs() []string {
	h := s.queries.hostOrNil()
	if h == nil {
		return nil
	}
	var out []string
	for _, a := range h.Addrs() {
		out = append(out, a.String()+"/p2p/"+h.ID().String())
	}
	return out
}

// handleStandby answers an analyst's request on the standby's host: a
// query of an existing release from the read-only server, anything else
// refused (ErrStandby). Once this process coordinates, it serves the
// request as the coordinator does.
func (s *Server) handleStandby(ctx context.Context, from transport.PeerID, req []byte) []byte {
	if resp, ok := s.asCoordinator(func() []byte { return s.handleRelease(ctx, from, req) }); ok {
		return resp
	}
	msg, err := protocol.Decode(req)
	if err != nil {
		return errorResponse("%s: malformed request: %w", s.name, err)
	}
	if sr, ok := msg.(*protocol.StatusRequest); ok {
		return s.standbyStatus(from, sr)
	}
	q, ok := msg.(*protocol.Query)
	if !ok || slices.Contains(s.cfg.Manifest.OperatorNames(), from) {
		return s.refuseStandby(fmt.Sprintf("%T", msg))
	}
	resp, err := s.standbyAnswer(ctx, from, q, req, false)
	if err == nil && refusedWith(resp, server.ErrUnknownRelease) {
		resp, err = s.standbyAnswer(ctx, from, q, req, true) // a release created since the last build
	}
	if err != nil {
		s.log.Warn("standing by: cannot rebuild the releases from the database", "err", err)
		return s.refuseStandby("query")
	}
	switch {
	case refusedWith(resp, protocol.ErrStandby):
		return s.refuseStandby("query of a release the coordinator must first complete")
	case refusedWith(resp, server.ErrUnknownRelease):
		// Perhaps being created: the coordinator knows.
		return s.refuseStandby("query of a release this standby does not hold")
	}
	return resp
}

// refusedWith reports whether resp is a refusal wrapping target.
func refusedWith(resp []byte, target error) bool {
	msg, err := protocol.Decode(resp)
	if err != nil {
		return false
	}
	e, ok := msg.(*protocol.Error)
	return ok && errors.Is(e.Remote(""), target)
}

// refuseStandby refuses what, naming the coordinator's libp2p address
// from the heartbeat rows.
func (s *Server) refuseStandby(what string) []byte {
	s.log.Info("standing by: refused a request for the coordinator", "request", what)
	return errorResponse("%s: %s refused: %w; ask the coordinating process at %s", s.name, what, protocol.ErrStandby, s.coordinatorAddr())
}

// coordinatorAddr is the coordinator's libp2p address from the
// heartbeat rows, or why it is unknown.
func (s *Server) coordinatorAddr() string {
	if ps, _, err := s.shared.Processes(3 * s.cfg.Heartbeat); err == nil {
		for _, p := range ps {
			if p.Coordinator && p.Listen != "" {
				return p.Listen
			}
		}
	}
	return "unknown: no coordinator recorded itself in the last three heartbeats"
}

// standbyStatus answers a status request at a standby from the
// database: the read-only server's state (ledger, releases, reports),
// the role's processes from the heartbeat rows, report counts withheld
// as the coordinator withholds them (statusCounts). The standby does
// not ask the helper (the coordinator checks it): it lists the leader
// only, its PeerError saying that a standby answered and naming the
// coordinator.
func (s *Server) standbyStatus(from transport.PeerID, m *protocol.StatusRequest) []byte {
	dataset := s.cfg.Manifest.Dataset
	if m.Dataset != dataset {
		return errorResponse("%s: %w %q", s.name, server.ErrUnknownDataset, m.Dataset)
	}
	s.log.Info("status request at a standby", "from", from)
	qs := s.queries
	qs.mu.Lock()
	srv, err := s.builtServer(qs, true)
	qs.mu.Unlock()
	if err != nil {
		return errorResponse("%s: status at a standby: %w", s.name, err)
	}
	status, err := srv.Status(dataset)
	if err != nil {
		return errorResponse("%s: status at a standby: %w", s.name, err)
	}
	mine := serverState(status)
	mine.Version = s.cfg.Version
	if err := s.fillProcesses(&mine); err != nil {
		s.log.Warn("listing the role's processes", "err", err)
	}
	mine.PeerError = fmt.Sprintf("answered by the standby process %s from the database; the coordinating process at %s checks the helper", s.procID, s.coordinatorAddr())
	st := &protocol.Status{Dataset: dataset, Servers: []protocol.ServerState{mine}}
	if err := s.statusCounts(st, slices.Contains(s.cfg.Manifest.OperatorNames(), from)); err != nil {
		return errorResponse("%s: status at a standby: %w", s.name, err)
	}
	return protocol.Encode(st)
}

// standbyAnswer has the read-only server (rebuilt first if rebuild or
// not yet built) answer query q.
func (s *Server) standbyAnswer(ctx context.Context, from transport.PeerID, q *protocol.Query, req []byte, rebuild bool) ([]byte, error) {
	qs := s.queries
	qs.mu.Lock()
	srv, err := s.builtServer(qs, rebuild)
	qs.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return srv.Handle(ctx, from, req), nil
}

// builtServer returns the read-only server, built first if it is not
// yet or if rebuild and the database changed since; the caller holds
// qs.mu.
func (s *Server) builtServer(qs *standbyQueries, rebuild bool) (*server.Server, error) {
	var now storeSize
	var err error
	if now.releases, err = s.store.Releases(s.cfg.Manifest.Dataset); err != nil {
		return nil, err
	}
	if now.reports, err = s.store.NumReports(s.cfg.Manifest.Dataset); err != nil {
		return nil, err
	}
	if qs.srv != nil && (!rebuild || now == qs.built) {
		return qs.srv, nil
	}
	srv, err := s.readOnlyServer(qs)
	if err != nil {
		return nil, err
	}
	qs.srv, qs.built = srv, now
	return srv, nil
}

// readOnlyServer builds a leader server from the database over a
// read-only view of the store, fed every stored report as a restarted
// server is (its verdicts come from the store; nothing drives
// verification).
func (s *Server) readOnlyServer(qs *standbyQueries) (*server.Server, error) {
	m := s.cfg.Manifest
	ro := readOnlyStore{s.store}
	cfg := server.Config{
		Role: server.Leader, Peer: qs.r.peer, Conn: qs.host.Conn(p2p.PeerProtocol),
		Ledger: ro, Releases: ro, Reports: ro, Datasets: []server.Dataset{qs.r.dataset}, Manifest: manifest.DigestsByName(m.Digests()),
	}
	key, err := sharedVerifyKey(m, s.cfg.Role, s.cfg.Identity)
	if err != nil {
		return nil, err
	}
	cfg.VerifyKey, cfg.Verdicts = key, ro
	srv, err := server.New(cfg)
	if err != nil {
		return nil, err
	}
	var raw [][]byte
	var ids []payload.ReportID
	flush := func() {
		srv.PrepareReplay(m.Dataset, raw)
		for i, up := range raw {
			srv.Handle(context.Background(), "store", up)
			srv.Stored(m.Dataset, ids[i])
		}
		raw, ids = raw[:0], ids[:0]
	}
	err = s.store.Reports(m.Dataset, func(id payload.ReportID, upload []byte) error {
		raw, ids = append(raw, bytes.Clone(upload)), append(ids, id)
		if len(raw) == replayChunk {
			flush()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	flush()
	return srv, nil
}

// readOnlyStore is the store as a standby's read-only server sees it:
// every read passes through, every write fails with ErrStandby, so that
// no request to a standby can charge, record a release or a verdict.
type readOnlyStore struct{ b store.Backend }

// errReadOnly is the failure of a write through readOnlyStore.
func errReadOnly(what string) error {
	return fmt.Errorf("%w: a standby does not %s", protocol.ErrStandby, what)
}

func (r readOnlyStore) Charge(string, core.ID, mechanism.Budget, mechanism.Budget) error {
	return errReadOnly("charge budget")
}
func (r readOnlyStore) Spent(dataset string) (mechanism.Budget, error) { return r.b.Spent(dataset) }
func (r readOnlyStore) Charged(dataset string, release core.ID) (bool, error) {
	return r.b.Charged(dataset, release)
}
func (r readOnlyStore) Releases(dataset string) (uint64, error) { return r.b.Releases(dataset) }
func (r readOnlyStore) SaveRelease(string, core.ID, []byte) error {
	return errReadOnly("record releases")
}
func (r readOnlyStore) DeleteRelease(string, core.ID) error { return errReadOnly("delete releases") }
func (r readOnlyStore) LoadReleases(dataset string, fn func(core.ID, []byte) error) error {
	return r.b.LoadReleases(dataset, fn)
}
func (r readOnlyStore) Uploads(dataset string, ids []core.ID, fn func(core.ID, []byte) error) error {
	return r.b.Uploads(dataset, ids, fn)
}
func (r readOnlyStore) SaveVerdicts(string, map[core.ID][]byte) error {
	return errReadOnly("record verdicts")
}
func (r readOnlyStore) LoadVerdicts(dataset string, fn func(core.ID, []byte) error) error {
	return r.b.LoadVerdicts(dataset, fn)
}
