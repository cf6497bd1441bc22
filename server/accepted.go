package server

// The reports a dataset holds, each with the digest of its upload as
// accepted, and the reports its role's processes folded, each with the
// digest of its upload as folded; the read-backs of their uploads for
// summing, each checked against its digest.

import (
	"crypto/sha256"
	"fmt"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// heldReports is a dataset's report set at one server: every report it
// holds (accepted: folded, or verified and counted), each with the
// digest of its upload as this server accepted it (uploadDigest; for a
// report accepted before a restart, the upload replayed, checked first
// against its verdict record's digest). Every later read-back of an
// accepted upload to sum it again is checked against it (read), so that
// an upload edited in the ReportStore after it was accepted is never
// summed.
type heldReports map[payload.ReportID][sha256.Size]byte

// read reads back from reports the stored uploads of the reports ids of
// dataset, in chunks of the caller's choosing, and calls fn with each,
// decoded, in order. An upload of a report held whose digest is not the
// one accepted is refused before fn sees it, with an error wrapping
// ErrUploadChanged that names the dataset, what it was read for (the
// release, say) and the report. A report not held (a fold's report
// rejected or not decided yet, foldedSums) has no accepted upload to be
// checked against here, and is read as stored (foldedReports.read
// checks a fold's).
func (h heldReports) read(reports ReportStore, dataset, what string, ids []payload.ReportID, fn func(up *protocol.Upload) error) error {
	return reports.Uploads(dataset, ids, func(id payload.ReportID, b []byte) error {
		up, err := storedUpload(id, b)
		if err != nil {
			return err
		}
		if want, ok := h[id]; ok && uploadDigest(up) != want {
			return fmt.Errorf("dataset %q: %s: report %v: %w: its stored upload's digest is not that of the upload this server accepted (the store was edited or damaged since); it is not summed: quarantine the report at both servers", dataset, what, id, ErrUploadChanged)
		}
		return fn(up)
	})
}

// readBack is heldReports.read or foldedReports.read.
type readBack func(reports ReportStore, dataset, what string, ids []payload.ReportID, fn func(up *protocol.Upload) error) error

// foldedReports are the reports the folds of a verified DCF dataset
// hold (PreparationStore.Folds), each with the SHA-256 of its upload as
// stored when it was folded.
type foldedReports map[payload.ReportID][sha256.Size]byte

// read is heldReports.read for reports of the folds whose outputs are
// taken out of them again (foldedSums: folded, but rejected or not
// decided yet): each upload read back must be the one folded, else it
// is refused before fn sees it, with an error wrapping ErrUploadChanged
// naming the dataset, what it was read for and the report — an upload
// edited in the store after it was folded would otherwise skew the sum
// by the difference of the two outputs.
func (f foldedReports) read(reports ReportStore, dataset, what string, ids []payload.ReportID, fn func(up *protocol.Upload) error) error {
	return reports.Uploads(dataset, ids, func(id payload.ReportID, b []byte) error {
		if want, ok := f[id]; !ok || sha256.Sum256(b) != want {
			return fmt.Errorf("dataset %q: %s: report %v, folded: %w: its stored upload's digest is not that of the upload its role's processes folded (the store was edited or damaged since); its output is not taken out of the folds: quarantine the report at both servers", dataset, what, id, ErrUploadChanged)
		}
		up, err := storedUpload(id, b)
		if err != nil {
			return err
		}
		return fn(up)
	})
}
