package server

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// ErrBusy is wrapped by the refusal of DropReports while a release is
// being created: the release may be agreeing on the reports to drop.
var ErrBusy = errcode.New(errcode.Busy, "a release is being created")

// ReportIDs returns, sorted, the IDs of the reports of dataset the
// server knows, which the two servers compare to find the reports only
// one holds, and those of them it holds open: not yet final, so that a
// release may never include them and DropReports may drop them. For an
// unverified dataset both are the reports it holds; for a verified one,
// ids are those it holds undecided and those it decided (accepted or
// rejected), and open the undecided ones, so that a report decided at
// both servers is never one server's alone. They are sorted after the
// server's lock is released, so that uploads do not wait for it.
func (s *Server) ReportIDs(dataset string) (ids, open []core.ID, err error) {
	s.mu.Lock()
	d, err := s.dataset(dataset)
	if err != nil {
		s.mu.Unlock()
		return nil, nil, err
	}
	if v := d.verified; v != nil {
		ids = slices.AppendSeq(slices.Collect(maps.Keys(v.uploads)), maps.Keys(v.counted))
		ids = slices.AppendSeq(slices.AppendSeq(ids, maps.Keys(v.restore)), maps.Keys(v.refused))
		open = slices.Collect(maps.Keys(v.uploads))
	} else {
		ids = slices.Collect(maps.Keys(d.reports))
	}
	s.mu.Unlock()
	slices.SortFunc(ids, payload.CompareIDs)
	if d.verified == nil {
		return ids, ids, nil
	}
	slices.SortFunc(open, payload.CompareIDs)
	return ids, open, nil
}

// Status is a server's part of a status report on one dataset.
type Status struct {
	Role Role
	// Reports is the number of reports the server counts; Held, of a
	// verified dataset, those it holds undecided.
	Reports, Held int
	// Spent is what the dataset's ledger holds; Total its budget.
	Spent, Total mechanism.Budget
	// Releases are the recorded releases, oldest first.
	Releases []ReleaseStatus
	// Rejected counts, of a verified dataset, the reports the server
	// rejected per reason (verify.Reason).
	Rejected map[string]int
}

// ReleaseStatus is a recorded release as a Status lists it: what it
// covers, over how many reports, and what it charged.
type ReleaseStatus struct {
	ID         core.ID
	Mechanism  mechanism.Params
	Components []core.Component
	Reports    int
	Charge     mechanism.Budget
	// Created is when the server created it, in Unix seconds (0 if its
	// record predates the field).
	Created int64
}

// Status returns the server's part of a status report on dataset: its
// role, the number of reports it counts and, of a verified dataset, of
// those it holds undecided and those it rejected, its ledger and its recorded
// releases with when each was created and what it charged, oldest first
// (those of unknown time first: they were recorded before records held
// it), then by ID.
func (s *Server) Status(dataset string) (Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Role: s.cfg.Role}
	d, err := s.dataset(dataset)
	if err != nil {
		return st, err
	}
	spent, err := s.cfg.Ledger.Spent(d.Name)
	if err != nil {
		return st, fmt.Errorf("%s: %w", s.cfg.Role, err)
	}
	st.Reports = len(d.reports)
	if d.verified != nil {
		st.Held = len(d.verified.uploads)
		st.Rejected = maps.Clone(d.verified.rejected)
	}
	st.Spent, st.Total = spent, d.Budget
	for id, rel := range d.releases {
		cost, err := specCost(&protocol.CreateRelease{Mechanism: rel.mechanism, Components: rel.components})
		if err != nil {
			return st, fmt.Errorf("%s: release %v: %w", s.cfg.Role, id, err)
		}
		st.Releases = append(st.Releases, ReleaseStatus{
			ID: id, Mechanism: rel.mechanism, Components: rel.components, Reports: len(rel.reports), Charge: cost, Created: rel.created,
		})
	}
	slices.SortFunc(st.Releases, func(a, b ReleaseStatus) int {
		return cmp.Or(cmp.Compare(a.Created, b.Created), payload.CompareIDs(a.ID, b.ID))
	})
	return st, nil
}

// DropReports removes the reports ids of dataset from the server, except
// those in a recorded release, and returns the sorted IDs it removed: it
// is how an operator purges reports only this server holds, which no
// release can include. While a release is being created it refuses
// (ErrBusy) rather than wait, since that release may be agreeing on the
// very reports; a release created after it no longer sees them. A DCF
// report's evaluation is subtracted from the aggregate again, its key
// read back from the ReportStore (an error drops nothing), so the caller
// removes them from durable storage afterwards.
func (s *Server) DropReports(dataset string, ids []core.ID) ([]core.ID, error) {
	if !s.releasing.TryLock() {
		return nil, fmt.Errorf("%s: dropping reports of dataset %q: %w; try again later", s.cfg.Role, dataset, ErrBusy)
	}
	defer s.releasing.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.dataset(dataset)
	if err != nil {
		return nil, err
	}
	released := make(map[payload.ReportID]bool)
	for _, rel := range d.releases {
		for _, id := range rel.reports {
			released[id] = true
		}
	}
	var dropped []payload.ReportID
	for _, id := range ids {
		if _, held := d.reports[id]; held && !released[id] && d.verified == nil {
			dropped = append(dropped, id)
		}
		if d.verified != nil {
			if _, held := d.verified.uploads[id]; held {
				dropped = append(dropped, id)
			}
		}
	}
	slices.SortFunc(dropped, payload.CompareIDs)
	if d.fold != nil {
		if err := d.fold.remove(d.reports, dropped, d.Name, s.cfg.Reports); err != nil {
			return nil, fmt.Errorf("%s: dropping reports of dataset %q: %w", s.cfg.Role, dataset, err)
		}
	}
	for _, id := range dropped {
		if d.verified != nil {
			delete(d.verified.uploads, id)
		}
		delete(d.reports, id)
	}
	return dropped, nil
}
