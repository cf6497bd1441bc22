package server

// Release creation, helper: the leader's request is checked
// (releaseCandidates), its noise drawn (prepareRelease, newDraft), the
// report set agreed with the leader (agree), and the release recorded
// and charged before the helper acknowledges it.

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// helperRelease creates a release the leader asks for. The helper checks
// the request against the dataset's policy, its budget and bins, and
// builds the release's noise (prepareRelease); the leader sends the size
// and digest of its set, and the full list if they differ; the helper
// keeps the intersection and returns the leader's IDs it lacks, so both
// use the same set. It checks the agreed set (its minimum size, what a
// record holds), then records the release and charges its ledger
// (commit) before acknowledging it. A retry of a release it has recorded
// is answered from the record (retriedRelease), at no further cost.
func (s *Server) helperRelease(m *protocol.CreateRelease) (protocol.Message, error) {
	p, answer, err := s.prepareRelease(m)
	switch {
	case err != nil:
		return nil, err
	case answer != nil:
		return answer, nil
	}
	defer s.doneCreating(p.d, m.Release)
	agreed, resp := s.agree(m, p.ids)
	if resp.NeedIDs {
		return resp, nil
	}
	if err := s.checkAgreed(p, m, agreed); err != nil {
		return nil, nothingCharged(err)
	}
	created, err := s.commit(p, m, resp)
	if err != nil && !errors.Is(err, ErrReleaseExists) {
		err = nothingCharged(err) // the record, or the charge, failed
	}
	return created, err
}

// prepareRelease checks a release request at the helper
// (releaseCandidates), marks it as being created, and draws its seed and
// builds its noise (newDraft), so that after it only the agreement, the
// charge and the record can fail. A retry of a release this server has
// recorded is answered from the record instead (answer).
func (s *Server) prepareRelease(m *protocol.CreateRelease) (p *draft, answer *protocol.ReleaseCreated, err error) {
	s.mu.Lock()
	d, cost, answer, err := s.releaseCandidates(m)
	s.mu.Unlock()
	if d == nil {
		return nil, answer, err
	}
	if p, err = s.newDraft(d, m, cost); err != nil {
		s.doneCreating(d, m.Release)
		return nil, nil, err
	}
	return p, nil, nil
}

// newDraft draws a seed for release m of d and builds its noise, over
// the sorted report IDs this server holds now; the release is created
// now, by this server's clock.
func (s *Server) newDraft(d *dataset, m *protocol.CreateRelease, cost ledger.Budget) (*draft, error) {
	rec := &releaseRecord{Dataset: m.Dataset, Release: m.Release, Mechanism: m.Mechanism, Components: m.Components, Created: time.Now().Unix()}
	p := &draft{d: d, cost: cost, rec: rec}
	var err error
	if p.rec.Seed, err = noise.NewSeed(); err != nil {
		return nil, fmt.Errorf("%s: release %v: %w", s.cfg.Role, m.Release, err)
	}
	if p.noise, err = p.rec.noise(); err != nil {
		return nil, fmt.Errorf("%s: release %v: %w", s.cfg.Role, m.Release, err)
	}
	s.mu.Lock()
	p.ids = make([]payload.ReportID, 0, len(d.reports))
	for id := range d.reports {
		p.ids = append(p.ids, id)
	}
	s.mu.Unlock()
	slices.SortFunc(p.ids, payload.CompareIDs)
	return p, nil
}

// releaseCandidates validates a release request at the helper against
// the dataset — its bins, its policy (releaseCost) and the rest of its
// budget (ledger.Admit) — and returns the dataset and the release's cost
// with the release marked as being created, or the answer from the
// record to a retry of a recorded release; the caller holds s.mu.
func (s *Server) releaseCandidates(m *protocol.CreateRelease) (*dataset, ledger.Budget, *protocol.ReleaseCreated, error) {
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, ledger.Budget{}, nil, err
	}
	if rel, recorded := d.releases[m.Release]; recorded {
		answer, err := s.retriedRelease(rel, m)
		return nil, ledger.Budget{}, answer, err
	}
	if d.creating[m.Release] {
		return nil, ledger.Budget{}, nil, fmt.Errorf("%s: release %v %w by another request", s.cfg.Role, m.Release, ErrReleaseBusy)
	}
	if err := s.notCharged(d, m.Release); err != nil {
		return nil, ledger.Budget{}, nil, err
	}
	// From here on, this server holds neither a record nor a charge of
	// the release: every refusal says so (ErrNotCharged).
	if m.Mechanism.Bins != d.Bins {
		return nil, ledger.Budget{}, nil, nothingCharged(fmt.Errorf("%s: release %v: mechanism over %d bins, but dataset %q has %d", s.cfg.Role, m.Release, m.Mechanism.Bins, d.Name, d.Bins))
	}
	cost, err := releaseCost(d, m)
	if err != nil {
		return nil, ledger.Budget{}, nil, nothingCharged(fmt.Errorf("%s: release %v refused: %w", s.cfg.Role, m.Release, err))
	}
	spent, err := s.cfg.Ledger.Spent(d.Name)
	if err != nil {
		return nil, ledger.Budget{}, nil, nothingCharged(err)
	}
	if err := ledger.Admit(false, spent, cost, d.Budget); err != nil {
		return nil, ledger.Budget{}, nil, nothingCharged(fmt.Errorf("%s: release %v refused: dataset %q: %w", s.cfg.Role, m.Release, d.Name, err))
	}
	d.creating[m.Release] = true
	return d, cost, nil, nil
}

// nothingCharged marks a helper's refusal of a release it holds neither
// a record nor a charge of (ErrNotCharged), which lets the leader abort
// it.
func nothingCharged(err error) error { return fmt.Errorf("%w (%w)", err, ErrNotCharged) }

// agree returns, at the helper, the report set of a release both servers
// hold and the answer to the leader: a request for its full list when
// the size and digest differ from its own (NeedIDs, and no set yet), and
// otherwise the intersection and the leader's IDs it lacks.
func (s *Server) agree(m *protocol.CreateRelease, ids []payload.ReportID) ([]payload.ReportID, *protocol.ReleaseCreated) {
	if len(m.IDs) == 0 && (len(ids) != m.Reports || payload.Digest(ids) != m.Digest) {
		return nil, &protocol.ReleaseCreated{NeedIDs: true}
	}
	agreed, resp := ids, &protocol.ReleaseCreated{}
	if len(m.IDs) != 0 {
		agreed, resp.Missing = intersect(m.IDs, ids)
	}
	resp.Reports = len(agreed)
	return agreed, resp
}
