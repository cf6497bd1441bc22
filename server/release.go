package server

// Release creation, both servers: the steps the leader's and the helper's
// paths share — the cost of a spec, the draft, the checks of the agreed
// set, the charge and record (commit) and the answer to a retry.

import (
	"context"
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// createRelease fixes a release over the report set both servers hold:
// at the leader, leaderRelease; at the helper, helperRelease.
func (s *Server) createRelease(ctx context.Context, from transport.PeerID, m *protocol.CreateRelease) (protocol.Message, error) {
	if err := s.fromLeader(from, "release"); err != nil {
		return nil, err
	}
	s.releasing.RLock()
	defer s.releasing.RUnlock()
	if s.cfg.Role == Leader {
		return s.leaderRelease(ctx, m)
	}
	if err := s.leaderShown(m); err != nil {
		return nil, err
	}
	s.mu.Lock()
	var rewound error
	if d := s.datasets[m.Dataset]; d != nil {
		rewound = d.ledgerAgreed()
	}
	s.mu.Unlock()
	if rewound != nil {
		return nil, fmt.Errorf("helper: release %v refused: %w", m.Release, rewound)
	}
	return s.helperRelease(m)
}

// releaseCost is what a release of dataset d charges: its spec (ε, δ)
// once per privacy unit of its components (payload.PrivacyUnits: Count,
// the {Label, NotLabel} pair and Probability are one unit each). The
// ledger accounts in d's neighbouring relation, and the spec is a
// release's privacy loss only under the relation it is calibrated for:
// a release outside d's policy (Policy.Allow), another relation among
// others, has no cost here and is refused, wrapping ErrPolicy.
func releaseCost(d *dataset, m *protocol.CreateRelease) (ledger.Budget, error) {
	if err := d.Policy.Allow(m.Mechanism); err != nil {
		return ledger.Budget{}, fmt.Errorf("dataset %q: %w", d.Name, err)
	}
	if d.verified != nil && !d.Probability && slices.Contains(m.Components, payload.Probability) {
		return ledger.Budget{}, fmt.Errorf("dataset %q: %w: its verified reports carry no probability component (release count, label and not-label, or collect probabilities with a dcf dataset that sets Probability)", d.Name, ErrPolicy)
	}
	return specCost(m)
}

// specCost is the spec (ε, δ) of release m once per privacy unit of its
// components, whatever the policy.
func specCost(m *protocol.CreateRelease) (ledger.Budget, error) {
	units, err := payload.PrivacyUnits(m.Components)
	if err != nil {
		return ledger.Budget{}, err
	}
	k := float64(units)
	return ledger.Budget{Epsilon: k * m.Mechanism.Epsilon, Delta: k * m.Mechanism.Delta}, nil
}

// draft is a release request that passed this server's checks, with its
// seed drawn and its noise built: what remains is to agree on the report
// set, charge and record it.
type draft struct {
	d     *dataset
	ids   []payload.ReportID // the reports this server holds, sorted
	cost  ledger.Budget
	rec   *releaseRecord // Reports set once agreed
	noise map[payload.Component]mechanism.Release
}

// checkAgreed checks the agreed report set of a release: at least the
// dataset's minimum, at most what a record holds.
func (s *Server) checkAgreed(p *draft, m *protocol.CreateRelease, agreed []payload.ReportID) error {
	p.rec.Reports = agreed
	if len(agreed) < p.d.MinReports {
		return fmt.Errorf("%s: dataset %q: %s held by both servers, %w %d", s.cfg.Role, p.d.Name, reportsHeld(m.Mechanism, len(agreed)), ErrTooFewReports, p.d.MinReports)
	}
	if err := p.rec.checkSize(); err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Role, err)
	}
	return nil
}

// notCharged refuses a release on the ledger that this server holds
// neither a record nor a pending record of (a lost store): its cost is
// unknown, so a retry cannot be admitted at no further cost.
func (s *Server) notCharged(d *dataset, id payload.ReleaseID) error {
	charged, err := s.cfg.Ledger.Charged(d.Name, id)
	if err != nil {
		return err
	}
	if charged {
		return fmt.Errorf("%s: release %v %w on the ledger of dataset %q without a record of it (a lost or foreign release store): ask for a new release ID", s.cfg.Role, id, ErrReleaseExists, d.Name)
	}
	return nil
}

// doneCreating clears the mark of a release being created.
func (s *Server) doneCreating(d *dataset, id payload.ReleaseID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(d.creating, id)
}

// commit charges and records a release, installs it and returns resp.
// The helper records before it charges, the leader charges before it
// records: the helper, which commits first, charges nothing unless its
// record is durable (a record whose charge a crash prevented is never
// loaded: loadReleases), and the leader, which commits only after the
// helper has, keeps its charge when its own record fails, with the
// release still pending; a retry then completes it at no further cost
// at either. A release recorded meanwhile is answered from its record.
func (s *Server) commit(p *draft, m *protocol.CreateRelease, resp *protocol.ReleaseCreated) (*protocol.ReleaseCreated, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rel, dup := p.d.releases[m.Release]; dup {
		return s.retriedRelease(rel, m)
	}
	rel := &release{id: m.Release, reports: p.rec.Reports, digest: payload.Digest(p.rec.Reports), mechanism: m.Mechanism, components: m.Components, noise: p.noise, created: p.rec.Created}
	if err := s.releaseSums(p.d, rel); err != nil {
		return nil, fmt.Errorf("%s: release %v: %w", s.cfg.Role, m.Release, err)
	}
	charge := func() error {
		if err := s.cfg.Ledger.Charge(p.d.Name, m.Release, p.cost, p.d.Budget); err != nil {
			return fmt.Errorf("%s: release %v refused: %w", s.cfg.Role, m.Release, err)
		}
		return nil
	}
	save := func() error {
		b, err := p.rec.MarshalBinary()
		if err == nil {
			err = s.cfg.Releases.SaveRelease(p.rec.Dataset, p.rec.Release, b)
		}
		if err != nil {
			return fmt.Errorf("%s: release %v not recorded: %w", s.cfg.Role, m.Release, err)
		}
		return nil
	}
	steps := []func() error{save, charge}
	if s.cfg.Role == Leader {
		steps = []func() error{charge, save}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	p.d.releases[m.Release] = rel
	return resp, nil
}

// retriedRelease answers a request for a release this server has
// recorded, rel, from the record: no new charge, no new seed, the record
// untouched. At the leader, it answers an analyst retrying after a lost
// reply; at the helper, the leader retrying after it crashed between the
// helper's acknowledgement and its own record. The spec must be the
// recorded one, and at the helper the leader must still offer every
// recorded report: the IDs beyond them are returned as missing, so the
// leader sums exactly the recorded set. Anything else is refused:
// answering with the same noise over another report set would reveal
// the difference of the two sums exactly.
func (s *Server) retriedRelease(rel *release, m *protocol.CreateRelease) (*protocol.ReleaseCreated, error) {
	if m.Mechanism != rel.mechanism || !slices.Equal(m.Components, rel.components) {
		return nil, fmt.Errorf("%s: release %v %w with another mechanism or components: ask for a new release ID", s.cfg.Role, m.Release, ErrReleaseExists)
	}
	resp := &protocol.ReleaseCreated{Reports: s.analystReports(rel.mechanism, len(rel.reports))}
	if s.cfg.Role == Leader {
		return resp, nil
	}
	if len(m.IDs) == 0 {
		if m.Reports != len(rel.reports) || m.Digest != payload.Digest(rel.reports) {
			return &protocol.ReleaseCreated{NeedIDs: true}, nil
		}
		return resp, nil
	}
	if _, unoffered := intersect(rel.reports, m.IDs); len(unoffered) != 0 {
		return nil, fmt.Errorf("%s: release %v %w over %d reports the leader no longer offers", s.cfg.Role, m.Release, ErrReleaseExists, len(unoffered))
	}
	_, resp.Missing = intersect(m.IDs, rel.reports)
	return resp, nil
}

// intersect returns the IDs of want that are in have and not in drop
// (sorted, as want), and the others.
func intersect(want, have []payload.ReportID, drop ...payload.ReportID) (in, out []payload.ReportID) {
	set := make(map[payload.ReportID]bool, len(have))
	for _, id := range have {
		set[id] = true
	}
	for _, id := range drop {
		delete(set, id)
	}
	for _, id := range want {
		if set[id] {
			in = append(in, id)
		} else {
			out = append(out, id)
		}
	}
	slices.SortFunc(in, payload.CompareIDs)
	return in, out
}
