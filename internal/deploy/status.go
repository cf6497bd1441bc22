package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// Defaults of the operations fields of ServerConfig.
const (
	DefaultPeerCheck   = 30 * time.Second
	DefaultPeerTimeout = 10 * time.Second
	DefaultOrphanCheck = 10 * time.Minute
	DefaultSummary     = time.Minute
)

// peerView is what a server knows of the other: the leader, whether it
// reached the helper at its last check; the helper, when it last heard
// from the leader.
type peerView struct {
	mu        sync.Mutex
	reachable bool
	at        time.Time
	err       string
}

// set records the outcome of a contact at now and reports whether
// reachability changed.
func (p *peerView) set(err error) (changed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed = p.at.IsZero() || p.reachable != (err == nil)
	p.reachable, p.at, p.err = err == nil, time.Now(), ""
	if err != nil {
		p.err = err.Error()
	}
	return changed
}

func (p *peerView) fill(st *protocol.ServerState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.PeerReachable, st.PeerError = p.reachable, p.err
	if !p.at.IsZero() {
		st.PeerCheckedAt = p.at.Unix()
	}
}

// orphanView is what a server found at the last comparison of the two
// servers' report sets: its open reports (held, not decided) the other
// server did not know.
type orphanView struct {
	mu  sync.Mutex
	ids []payload.ReportID
	at  time.Time
}

func (o *orphanView) set(ids []payload.ReportID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ids, o.at = ids, time.Now()
}

func (o *orphanView) fill(st *protocol.ServerState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st.OneServer = len(o.ids)
	if !o.at.IsZero() {
		st.ComparedAt = o.at.Unix()
	}
}

// intersectIDs splits ids into those in set and the others, in one
// merge of the two lists, both sorted by payload.CompareIDs.
func intersectIDs(ids, set []payload.ReportID) (in, out []payload.ReportID) {
	j := 0
	for _, id := range ids {
		for j < len(set) && payload.CompareIDs(set[j], id) < 0 {
			j++
		}
		if j < len(set) && set[j] == id {
			in = append(in, id)
		} else {
			out = append(out, id)
		}
	}
	return in, out
}

// state returns this server's part of a status report.
func (s *Server) state() (protocol.ServerState, error) {
	status, err := s.srv.Status(s.cfg.Manifest.Dataset)
	st := serverState(status)
	if err != nil {
		return st, err
	}
	st.Version = s.cfg.Version
	st.Errors = s.last.snapshot()
	s.orphans.fill(&st)
	s.peer.fill(&st)
	if err := s.fillProcesses(&st); err != nil {
		s.log.Warn("listing the role's processes", "err", err)
	}
	return st, nil
}

// serverState is st as a status report carries it.
func serverState(st server.Status) protocol.ServerState {
	out := protocol.ServerState{
		Role: st.Role.String(), Reports: st.Reports, Held: st.Held,
		SpentEpsilon: st.Spent.Epsilon, SpentDelta: st.Spent.Delta,
		TotalEpsilon: st.Total.Epsilon, TotalDelta: st.Total.Delta,
	}
	for _, r := range st.Releases {
		out.Releases = append(out.Releases, protocol.ReleaseState{
			Release: r.ID, Mechanism: r.Mechanism, Components: r.Components, Reports: r.Reports,
			ChargeEpsilon: r.Charge.Epsilon, ChargeDelta: r.Charge.Delta, Created: r.Created,
		})
	}
	for _, reason := range slices.Sorted(maps.Keys(st.Rejected)) {
		out.Rejected = append(out.Rejected, protocol.Rejection{Reason: reason, Count: st.Rejected[reason]})
	}
	return out
}

// handleStatus answers a StatusRequest: at the leader, an analyst's
// (fedecdf status), after comparing report sets with the helper; at
// the helper, the leader's.
func (s *Server) handleStatus(ctx context.Context, from transport.PeerID, m *protocol.StatusRequest) []byte {
	if m.Dataset != s.cfg.Manifest.Dataset {
		return errorResponse("%s: %w %q", s.name, server.ErrUnknownDataset, m.Dataset)
	}
	var st *protocol.Status
	var err error
	if s.cfg.Role == server.Leader {
		s.log.Info("status request", "from", from)
		st, err = s.leaderStatus(ctx, slices.Contains(s.cfg.Manifest.OperatorNames(), from))
	} else {
		st, err = s.helperStatus(m)
	}
	if err != nil {
		s.log.Error("status failed", "from", from, "err", err)
		return errorResponse("%s: status: %w", s.name, err)
	}
	return protocol.Encode(st)
}

// resolvedForStatus completes (or aborts) the releases a cut link left
// pending, charged at the helper and not yet here, now rather than at
// the next peer check, so that both ledgers agree in a status; it
// reports whether the leader's spending changed.
func (s *Server) resolvedForStatus(ctx context.Context) bool {
	dataset := s.cfg.Manifest.Dataset
	before, err := s.store.Spent(dataset)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.PeerTimeout)
	defer cancel()
	if err := s.srv.ResolvePending(ctx); err != nil {
		s.log.Debug("pending releases not resolved for status", "err", err)
	}
	after, err := s.store.Spent(dataset)
	return err == nil && after != before
}

// leaderStatus compares the report sets with the helper and returns
// both servers' states (the helper's if reached); report counts and
// errors to an operator, and to an analyst only under replace-one, where
// n is public (server: an add/remove release hides n from the analyst,
// and so does status).
func (s *Server) leaderStatus(ctx context.Context, operator bool) (*protocol.Status, error) {
	helper, _ := s.checkHelper(ctx, true)
	if helper != nil && s.resolvedForStatus(ctx) {
		helper, _ = s.checkHelper(ctx, true)
	}
	mine, err := s.state()
	if err != nil {
		return nil, err
	}
	st := &protocol.Status{Dataset: s.cfg.Manifest.Dataset, Servers: []protocol.ServerState{mine}}
	if helper != nil {
		st.Compared, st.Both = helper.Compared, helper.Both
		st.Servers = append(st.Servers, helper.Servers...)
	}
	if err := s.statusCounts(st, operator); err != nil {
		return nil, err
	}
	return st, nil
}

// statusCounts withholds st's report counts and errors unless asked by
// an operator or under replace-one, where n is public.
func (s *Server) statusCounts(st *protocol.Status, operator bool) error {
	policy, err := s.cfg.Manifest.Policy()
	if err != nil {
		return err
	}
	st.Counts = operator || policy.Relation == mechanism.ReplaceOne
	if !st.Counts {
		withholdCounts(st)
	}
	return nil
}

// withholdCounts zeroes what tells an analyst how many reports the
// servers hold, and the errors, which name reports.
func withholdCounts(st *protocol.Status) {
	st.Both, st.Missing = 0, nil
	for i := range st.Servers {
		sv := &st.Servers[i]
		sv.Reports, sv.Held, sv.OneServer, sv.Errors, sv.Rejected = 0, 0, 0, nil, nil
		for j := range sv.Releases {
			sv.Releases[j].Reports = 0
		}
	}
}

// checkHelper asks the helper for its status within PeerTimeout,
// sending the leader's report set (its size and digest; with compare,
// every ID), records whether it answered, and the open reports only the
// leader holds when the helper could tell, purging them if configured.
func (s *Server) checkHelper(ctx context.Context, compare bool) (*protocol.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.PeerTimeout)
	defer cancel()
	ids, open, err := s.srv.ReportIDs(s.cfg.Manifest.Dataset)
	if err != nil {
		return nil, err
	}
	req := &protocol.StatusRequest{Dataset: s.cfg.Manifest.Dataset, Reports: len(ids), Digest: payload.Digest(ids), Compare: compare}
	if compare {
		req.IDs = ids
	}
	resp, err := protocol.Call[*protocol.Status](ctx, s.host.Conn(p2p.PeerProtocol), manifest.HelperName, req)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		err = fmt.Errorf("no answer within the peer timeout %v: is the helper hung, or the leader→helper path blocked? (%w)", s.cfg.PeerTimeout, err)
	case err == nil && len(resp.Servers) != 1:
		err = fmt.Errorf("the helper's status holds %d servers, want 1", len(resp.Servers))
	}
	if s.peer.set(err) || err != nil {
		s.logPeer(err)
	}
	if err != nil {
		return nil, err
	}
	if resp.Compared {
		only, _ := intersectIDs(resp.Missing, open)
		s.found(only)
	}
	return resp, nil
}

// logPeer logs a change of the helper's reachability, and every failed
// check: a hung helper or a blocked leader→helper path shows in the
// leader's log before the first release fails.
func (s *Server) logPeer(err error) {
	if err != nil {
		s.log.Warn("helper not reachable", "err", err)
		return
	}
	s.log.Info("the helper is reachable")
}

// helperStatus answers the leader: the helper's state, and, when the
// leader sent its IDs or its set's size and digest match the helper's,
// the number both know and the leader's IDs the helper does not know;
// the helper's own open reports beyond the leader's are its
// one-server-only ones (server.Server.ReportIDs: a report decided at a
// server is not open, so a verified report decided at both never is).
func (s *Server) helperStatus(m *protocol.StatusRequest) (*protocol.Status, error) {
	ids, open, err := s.srv.ReportIDs(s.cfg.Manifest.Dataset)
	if err != nil {
		return nil, err
	}
	st := &protocol.Status{Dataset: m.Dataset}
	switch {
	case m.Compare:
		if !slices.IsSortedFunc(m.IDs, payload.CompareIDs) {
			return nil, errors.New("the leader's report IDs are not sorted")
		}
		var mine []payload.ReportID
		mine, st.Missing = intersectIDs(m.IDs, ids)
		_, only := intersectIDs(ids, mine)
		only, _ = intersectIDs(only, open)
		st.Compared, st.Both = true, len(mine)
		s.found(only)
	case m.Reports == len(ids) && m.Digest == payload.Digest(ids):
		st.Compared, st.Both = true, len(ids)
		s.found(nil)
	}
	mine, err := s.state()
	if err != nil {
		return nil, err
	}
	st.Servers = []protocol.ServerState{mine}
	return st, nil
}

// DefaultOrphanGrace is how long after its receipt a report held by one
// server only is not warned about: during ingest, a party's upload to
// the other server is usually on its way (retried within the party's
// retry window), and the comparison merely saw it first.
const DefaultOrphanGrace = 2 * time.Minute

// found records the reports only this server held at a comparison,
// warns about those received longer than the orphan grace ago
// (DefaultOrphanGrace; the others at DEBUG), and purges those older
// than PurgeAfter if set.
func (s *Server) found(only []payload.ReportID) {
	if s.cfg.PurgeAfter > 0 && len(only) > 0 {
		only = s.purge(only)
	}
	s.orphans.set(only)
	if len(only) == 0 {
		return
	}
	grace := DefaultOrphanGrace
	if g := s.orphanGrace.Load(); g != 0 {
		grace = time.Duration(g)
	}
	old, err := s.receivedBefore(only, time.Now().Add(-grace))
	if err != nil {
		s.log.Error("reading the receipt times of the reports held by this server only", "err", err)
		old = only
	}
	if len(old) == 0 {
		s.log.Debug("reports held by this server only, received recently (their other share is likely on its way)", "reports", len(only))
		return
	}
	s.log.Warn("reports held by this server only", "reports", len(old), "received_within_grace", len(only)-len(old), "grace", grace.String(),
		"hint", "no release includes them: rerun the parties' fedecdf party --input (same --row-key) to store the missing share, or purge them with fedecdf server --purge-orphans-after")
}

// receivedBefore returns the reports of ids received before cutoff (a
// report stored without a time counts from the server's start).
func (s *Server) receivedBefore(ids []payload.ReportID, cutoff time.Time) ([]payload.ReportID, error) {
	times, err := s.store.ReceivedAt(s.cfg.Manifest.Dataset, ids)
	if err != nil {
		return nil, err
	}
	var old []payload.ReportID
	for i, at := range times {
		if at.IsZero() {
			at = s.started
		}
		if at.Before(cutoff) {
			old = append(old, ids[i])
		}
	}
	return old, nil
}

// purge removes the reports of only received longer than PurgeAfter ago
// from the server and its store, and returns those it kept.
func (s *Server) purge(only []payload.ReportID) []payload.ReportID {
	dataset := s.cfg.Manifest.Dataset
	old, err := s.receivedBefore(only, time.Now().Add(-s.cfg.PurgeAfter))
	if err != nil {
		s.log.Error("purge: reading receipt times", "err", err)
		return only
	}
	if len(old) == 0 {
		return only
	}
	dropped, err := s.srv.DropReports(dataset, old)
	if err != nil {
		s.log.Info("purge postponed", "reason", err)
		return only
	}
	if _, err := s.store.DeleteReports(dataset, dropped); err != nil {
		s.log.Error("purge: deleting reports from the store (they come back at the next start and are purged again)", "err", err)
	}
	s.counters.purged.Add(int64(len(dropped)))
	s.log.Info("purged reports held by this server only", "reports", len(dropped), "older_than", s.cfg.PurgeAfter.String())
	_, kept := intersectIDs(only, dropped)
	return kept
}

// checkReports is the periodic check of the report sets (watchHelper,
// every PeerCheck): their size and digest, and every ID when they differ
// and the last full comparison is older than OrphanCheck.
func (s *Server) checkReports() {
	resp, err := s.checkHelper(context.Background(), false)
	if err != nil || resp.Compared || time.Since(s.compared) < s.cfg.OrphanCheck {
		return
	}
	if _, err := s.checkHelper(context.Background(), true); err == nil {
		s.compared = time.Now()
	}
}

// every runs f every interval until ctx ends (never if interval ≤ 0).
func (s *Server) every(ctx context.Context, interval time.Duration, f func()) {
	if interval <= 0 {
		return
	}
	s.ops.Add(1)
	go func() {
		defer s.ops.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	}()
}
