package store

import (
	"errors"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestQuarantineBackend, on both stores: quarantining a report of a
// stopped server deletes its upload and its verdict, and the reopened
// store tells it quarantined, refuses it if uploaded again
// (ErrQuarantined) and keeps the other reports; a store a server holds
// open is refused (ErrLocked).
func TestQuarantineBackend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		bad, good := reportID(1), reportID(2)
		s := f.open(t)
		for _, id := range []payload.ReportID{bad, good} {
			if err := s.PutReport("d", id, []byte{id[0]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveVerdicts("d", map[payload.ReportID][]byte{bad: {1}}); err != nil {
			t.Fatal(err)
		}
		if _, err := QuarantineBackend(f.spec, "", "d", []payload.ReportID{bad}); !errors.Is(err, ErrLocked) {
			t.Errorf("quarantine of a store held open: %v, want ErrLocked", err)
		}
		s.Close()
		n, err := QuarantineBackend(f.spec, "", "d", []payload.ReportID{bad})
		if n != 2 || err != nil {
			t.Fatalf("quarantine: %d records deleted, %v; want its upload and its verdict", n, err)
		}
		s = f.open(t)
		defer s.Close()
		q := s.(interface {
			Quarantined(string, payload.ReportID) bool
		})
		if !q.Quarantined("d", bad) || q.Quarantined("d", good) {
			t.Error("Quarantined does not tell the quarantined report")
		}
		if err := s.PutReport("d", bad, []byte("again")); !errors.Is(err, ErrQuarantined) {
			t.Errorf("upload of a quarantined report: %v, want ErrQuarantined", err)
		}
		var held []payload.ReportID
		if err := s.Reports("d", func(id payload.ReportID, _ []byte) error {
			held = append(held, id)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(held, []payload.ReportID{good}) {
			t.Errorf("reports after the quarantine: %v, want %v only", held, good)
		}
		verdicts := 0
		if err := s.LoadVerdicts("d", func(payload.ReportID, []byte) error {
			verdicts++
			return nil
		}); err != nil || verdicts != 0 {
			t.Errorf("%d verdicts after the quarantine (%v), want 0", verdicts, err)
		}
	})
}
