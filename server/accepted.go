package server

// The reports a dataset holds, each with the digest of its upload as
// accepted, and the one read-back of accepted uploads for summing.

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
// checked against, and is read as stored.
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
