package server

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// checkBound returns an error (ErrReportSetChanged) unless this server
// holds every report of the set release id was created over, reports
// (sorted), whose digest its record keeps (digest): it recomputes the
// digest of the reports it holds among them and compares. A release is
// bound to its report set: answering it with the same noise over another
// set would reveal the difference of the two sums exactly (a lost report
// and a new one: the new report's prefix vector minus the lost one's).
func checkBound(id payload.ReleaseID, held heldReports, reports []payload.ReportID, digest [32]byte) error {
	kept := make([]payload.ReportID, 0, len(reports))
	var missing []payload.ReportID
	for _, r := range reports {
		if _, ok := held[r]; ok {
			kept = append(kept, r)
		} else {
			missing = append(missing, r)
		}
	}
	got := payload.Digest(kept)
	if len(missing) == 0 && got == digest {
		return nil
	}
	first := ""
	if len(missing) > 0 {
		first = fmt.Sprintf(", the first %v", missing[0])
	}
	return fmt.Errorf("%w: release %v was created over %d reports (digest %x), of which this server holds %d (digest %x): %d missing%s; it is not answered over another set (restore the store from a backup to read it again)",
		ErrReportSetChanged, id, len(reports), digest[:8], len(kept), got[:8], len(missing), first)
}

// releaseSums sets the release's sums at a verified dataset from the
// outputs of exactly its reports, all held (checkBound): the aggregate when
// they are every report this server accepted, and otherwise — a release
// created before the dataset grew, re-read after a restart — their
// outputs re-derived from their uploads, read back from reports, into a
// fresh aggregate (each report is rederived once per release and
// restart: the sums are kept until the process ends). With a
// PreparationStore the aggregate is the folds (foldedSums), and a
// release whose sums they cannot give is re-derived likewise — unless
// an upload to take out of them is not the one folded
// (ErrUploadChanged): the release is refused, the damage shown, until
// the report is quarantined.
func (v *verified) releaseSums(dataset string, held heldReports, rel *release, reports ReportStore) error {
	if len(rel.reports) == len(held) && len(held) == v.scheme.accepted() {
		if v.prep == nil {
			return v.scheme.sums(rel)
		}
		err := v.foldedSums(dataset, rel, reports)
		if err == nil || errors.Is(err, ErrUploadChanged) {
			return err
		}
	}
	agg, err := v.scheme.fresh()
	if err != nil {
		return err
	}
	what := fmt.Sprintf("re-deriving the release's %d reports", len(rel.reports))
	if err := v.rederiveInto(agg, dataset, what, rel.reports, reports, v.counted.read); err != nil {
		return err
	}
	return agg.sums(rel)
}

// storedUpload decodes the stored upload of report id.
func storedUpload(id payload.ReportID, b []byte) (*protocol.Upload, error) {
	msg, err := protocol.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("stored report %v: %w", id, err)
	}
	up, ok := msg.(*protocol.Upload)
	if !ok || up.Report != id {
		return nil, fmt.Errorf("stored report %v is not its upload", id)
	}
	return up, nil
}

// UnboundReleases returns, for each release of dataset whose report set
// this server no longer holds in full, the refusal a read of it meets
// (ErrReportSetChanged), in release ID order: a restarted server, once
// its store is replayed, reports them at start rather than at the first
// read.
func (s *Server) UnboundReleases(dataset string) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.datasets[dataset]
	if !ok {
		return nil
	}
	ids := slices.SortedFunc(maps.Keys(d.releases), func(a, b payload.ReleaseID) int { return bytes.Compare(a[:], b[:]) })
	var errs []error
	for _, id := range ids {
		rel := d.releases[id]
		if err := checkBound(id, d.reports, rel.reports, rel.digest); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.cfg.Role, err))
		}
	}
	return errs
}
