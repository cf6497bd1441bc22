package server

// Release creation, leader: an analyst's request is recorded as pending
// (beginRelease), the helper is asked (agreeWithHelper), and the release
// is charged and recorded (completeRelease) or aborted; ResolvePending
// completes what a crash or a lost link left pending.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// leaderRelease creates a release an analyst asks for, as the states and
// transitions of server/doc.go ("Release creation") say: a new request
// that passes the leader's checks is recorded as pending (beginRelease)
// before the helper hears of it; completeRelease then asks the helper
// and, on its acknowledgement, charges and records the release, or on
// its refusal aborts it. A retry of a pending release, with exactly its
// spec, runs completeRelease again; a retry of a created one is answered
// from its record.
func (s *Server) leaderRelease(ctx context.Context, m *protocol.CreateRelease) (protocol.Message, error) {
	if err := s.checkPeer(ctx); err != nil {
		return nil, s.notAsked(m, err)
	}
	s.mu.Lock()
	d := s.datasets[m.Dataset]
	s.mu.Unlock()
	if d != nil {
		if err := s.checkLedger(ctx, d); err != nil {
			return nil, s.notAsked(m, err)
		}
	}
	in, answer, err := s.beginRelease(m)
	if in == nil {
		if answer == nil {
			return nil, err
		}
		return answer, err
	}
	defer s.doneCreating(d, m.Release)
	return s.completeRelease(ctx, d, in)
}

// beginRelease checks a release request at the leader and returns the
// pending release to complete, marked as being created: a pending one
// whose spec the request repeats exactly, or a new one, which must pass
// the dataset's bins, policy and budget — net of the costs the pending
// releases hold — and is recorded as pending. A retry of a created
// release is answered from its record instead (answer).
func (s *Server) beginRelease(m *protocol.CreateRelease) (*intent, *protocol.ReleaseCreated, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: release %v refused", err, m.Release)
	}
	if m.Mechanism.Bins != d.Bins {
		return nil, nil, fmt.Errorf("leader: release %v: mechanism over %d bins, but dataset %q has %d", m.Release, m.Mechanism.Bins, d.Name, d.Bins)
	}
	if rel, recorded := d.releases[m.Release]; recorded {
		answer, err := s.retriedRelease(rel, m)
		return nil, answer, err
	}
	if d.creating[m.Release] {
		return nil, nil, fmt.Errorf("leader: release %v %w by another request: retry it in a moment", m.Release, ErrReleaseBusy)
	}
	in := d.pending[m.Release]
	if in != nil && !sameSpec(in.spec, m) {
		return nil, nil, fmt.Errorf("leader: release %v is pending with another mechanism or components, and %w: retry it with its spec (%s ε=%g δ=%g, components %v), or ask for a new release ID", m.Release, ErrReleaseExists, in.spec.Mechanism.Name, in.spec.Mechanism.Epsilon, in.spec.Mechanism.Delta, in.spec.Components)
	}
	if in == nil {
		if in, err = s.newIntent(d, m); err != nil {
			return nil, nil, err
		}
	}
	d.creating[m.Release] = true
	return in, nil, nil
}

// newIntent admits a new release m of d against the dataset's policy and
// budget, the costs of pending releases held, and records it as pending
// (durably, before the helper hears of it); the caller holds s.mu.
func (s *Server) newIntent(d *dataset, m *protocol.CreateRelease) (*intent, error) {
	cost, err := releaseCost(d, m)
	if err != nil {
		return nil, fmt.Errorf("leader: release %v refused: %w", m.Release, err)
	}
	if err := s.notCharged(d, m.Release); err != nil {
		return nil, err
	}
	spent, err := s.cfg.Ledger.Spent(d.Name)
	if err != nil {
		return nil, err
	}
	held, err := s.held(d)
	if err != nil {
		return nil, err
	}
	if err := ledger.Admit(false, spent.Add(held), cost, d.Budget); err != nil {
		if held != (ledger.Budget{}) {
			err = fmt.Errorf("%w (the spent budget includes ε=%g, δ=%g held by %d pending releases until a retry of each completes or aborts it)", err, held.Epsilon, held.Delta, len(d.pending))
		}
		return nil, fmt.Errorf("leader: release %v refused: dataset %q: %w", m.Release, d.Name, err)
	}
	if err := s.cfg.Releases.SaveRelease(d.Name, m.Release, marshalPending(m)); err != nil {
		return nil, fmt.Errorf("leader: release %v refused, nothing charged: its pending record could not be saved: %w", m.Release, err)
	}
	in := &intent{spec: releaseSpec(m), cost: cost}
	d.pending[m.Release] = in
	return in, nil
}

// held is what the leader's pending releases of d not yet on its ledger
// hold of the budget; the caller holds s.mu.
func (s *Server) held(d *dataset) (ledger.Budget, error) {
	var held ledger.Budget
	for id, in := range d.pending {
		charged, err := s.cfg.Ledger.Charged(d.Name, id)
		if err != nil {
			return held, err
		}
		if !charged {
			held = held.Add(in.cost)
		}
	}
	return held, nil
}

// sameSpec reports whether the request m repeats the spec of a release.
func sameSpec(spec, m *protocol.CreateRelease) bool {
	return m.Mechanism == spec.Mechanism && slices.Equal(m.Components, spec.Components)
}

// completeRelease asks the helper for a pending release, in.spec, over
// the reports the leader holds now, and on its acknowledgement charges
// and records the release (commit), which ends its pending state. A
// refusal by the helper that says it holds no charged release of that ID
// aborts it (abort); anything else — no answer, a lost reply, a failed
// charge or record here — leaves it pending, and the error says how to
// complete it.
func (s *Server) completeRelease(ctx context.Context, d *dataset, in *intent) (protocol.Message, error) {
	m := in.spec
	if d.verified != nil {
		// Every held report is decided, and the helper told, before the
		// leader offers its verified set; no report is decided while the
		// two servers agree.
		if err := s.verifyDataset(ctx, d, true); err != nil {
			return nil, s.stillPending(m, err)
		}
		s.verifying.Lock()
		defer s.verifying.Unlock()
	}
	p, err := s.newDraft(d, m, in.cost)
	if err != nil {
		return nil, s.stillPending(m, err)
	}
	agreed, err := s.agreeWithHelper(ctx, m, p.ids)
	if err != nil {
		return nil, s.abortOrKeep(d, m, err)
	}
	if err := s.checkAgreed(p, m, agreed); err != nil {
		return nil, s.stillPending(m, err)
	}
	resp, err := s.commit(p, m, &protocol.ReleaseCreated{Reports: s.analystReports(m.Mechanism, len(agreed))})
	if err != nil {
		return nil, s.stillPending(m, err)
	}
	s.mu.Lock()
	delete(d.pending, m.Release)
	s.mu.Unlock()
	return resp, nil
}

// abortOrKeep ends a pending release m the helper did not acknowledge
// with err: it is aborted (abort) when the helper refused it saying it
// holds neither a record nor a charge of it (ErrNotCharged: it looked,
// and it charges only what it acknowledges) and the leader has not
// charged it; any other refusal (another manifest, another release under
// the ID, a request for it running) or no answer leaves it pending.
func (s *Server) abortOrKeep(d *dataset, m *protocol.CreateRelease, err error) error {
	var refused *protocol.RemoteError
	if !errors.As(err, &refused) || !errors.Is(err, ErrNotCharged) {
		return s.stillPending(m, err)
	}
	if aerr := s.abort(d, m.Release); aerr != nil {
		return s.stillPending(m, errors.Join(err, aerr))
	}
	return fmt.Errorf("leader: release %v %w, nothing charged, no noise released: %w", m.Release, ErrReleaseAborted, err)
}

// abort deletes the pending record of release id of d, unless the
// leader has charged it (then the helper acknowledged it once, and a
// retry completes it from the helper's record).
func (s *Server) abort(d *dataset, id payload.ReleaseID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.notCharged(d, id); err != nil {
		return err
	}
	if err := s.cfg.Releases.DeleteRelease(d.Name, id); err != nil {
		return err
	}
	delete(d.pending, id)
	return nil
}

// notAsked is the error of an attempt at release m that failed before
// the leader asked the helper for it (the exchange of manifest digests):
// a pending release stays pending, a new one is refused.
func (s *Server) notAsked(m *protocol.CreateRelease, err error) error {
	s.mu.Lock()
	d := s.datasets[m.Dataset]
	pending := d != nil && d.pending[m.Release] != nil
	s.mu.Unlock()
	if pending {
		return s.stillPending(m, err)
	}
	return fmt.Errorf("leader: release %v refused, nothing recorded or charged: %w", m.Release, err)
}

// stillPending is the error of an attempt that left release m pending.
func (s *Server) stillPending(m *protocol.CreateRelease, err error) error {
	return fmt.Errorf("leader: release %v %w: %w; nothing is released, and its cost stays held until it completes: retry release %v with the same spec, or read it by its ID, to complete or abort it at both servers", m.Release, ErrReleasePending, err, m.Release)
}

// ResolvePending retries, at the leader, every pending release with the
// helper, completing or aborting each (a leader restarted after a crash
// or a lost link calls it once it reaches the helper again). It returns
// the errors of those that stay pending.
func (s *Server) ResolvePending(ctx context.Context) error {
	if s.cfg.Role != Leader {
		return nil
	}
	var specs []*protocol.CreateRelease
	s.mu.Lock()
	for _, d := range s.datasets {
		for _, in := range d.pending {
			specs = append(specs, in.spec)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, m := range specs {
		if _, err := s.leaderRelease(ctx, m); err != nil && !errors.Is(err, ErrReleaseAborted) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resolveForQuery completes a pending release before the leader answers
// a query of it: reading a release whose creation was cut off is how an
// analyst retries it.
func (s *Server) resolveForQuery(ctx context.Context, m *protocol.Query) error {
	s.mu.Lock()
	var spec *protocol.CreateRelease
	if d, ok := s.datasets[m.Dataset]; ok && d.pending[m.Release] != nil {
		spec = d.pending[m.Release].spec
	}
	s.mu.Unlock()
	if spec == nil {
		return nil
	}
	_, err := s.leaderRelease(ctx, spec)
	return err
}

// agreeWithHelper runs the release at the helper and returns the agreed
// report set: the leader's IDs minus those the helper lacks.
func (s *Server) agreeWithHelper(ctx context.Context, m *protocol.CreateRelease, ids []payload.ReportID) ([]payload.ReportID, error) {
	req := *m
	req.Reports, req.Digest, req.IDs = len(ids), payload.Digest(ids), nil
	resp, err := protocol.Call[*protocol.ReleaseCreated](ctx, s.cfg.Conn, s.cfg.Peer, &req)
	if err == nil && resp.NeedIDs {
		req.IDs = ids
		resp, err = protocol.Call[*protocol.ReleaseCreated](ctx, s.cfg.Conn, s.cfg.Peer, &req)
	}
	if err != nil {
		return nil, err
	}
	if resp.NeedIDs {
		return nil, fmt.Errorf("the helper asked again for the report IDs of release %v", m.Release)
	}
	agreed, extra := ids, []payload.ReportID(nil)
	if len(resp.Missing) != 0 { // else the helper holds them all: no set to build
		agreed, extra = intersect(ids, ids, resp.Missing...)
	}
	if len(extra) != len(resp.Missing) || len(agreed) != resp.Reports {
		return nil, fmt.Errorf("the helper's report set for release %v (%d reports, %d missing) is inconsistent with the leader's %d", m.Release, resp.Reports, len(resp.Missing), len(ids))
	}
	return agreed, nil
}
