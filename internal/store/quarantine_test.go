package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestQuarantineSetsDamagedReportAside: one flipped byte in one stored
// upload refuses the store, naming the file and the report; quarantined,
// that report's upload and verdicts are gone, every other record is
// intact, and an upload of it again is refused.
func TestQuarantineSetsDamagedReportAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	uploads := map[payload.ReportID][]byte{}
	for i := range 5 {
		id := reportID(byte(i + 1))
		uploads[id] = bytes.Repeat([]byte{byte(0x30 + i)}, 64)
		if err := s.PutReport("d", id, uploads[id]); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveVerdicts("d", map[payload.ReportID][]byte{id: {1, 1, 0}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	bad := reportID(3)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, uploads[bad])
	if at < 0 {
		t.Fatal("the upload is not in the file")
	}
	b[at+10] ^= 0x40
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), bad.String()) {
		t.Fatalf("opening the damaged store: %v; want ErrDamaged naming the file and the report (cmd/fedecdf adds the way out)", err)
	}
	n, err := Quarantine(path, "d", []payload.ReportID{bad})
	if err != nil || n != 2 {
		t.Fatalf("Quarantine: %d records deleted, %v; want its upload and its verdict", n, err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := map[payload.ReportID][]byte{}
	if err := s.Reports("d", func(id payload.ReportID, up []byte) error { got[id] = up; return nil }); err != nil {
		t.Fatal(err)
	}
	verdicts := 0
	if err := s.LoadVerdicts("d", func(id payload.ReportID, _ []byte) error {
		if id == bad {
			t.Errorf("the quarantined report's verdict is still loaded")
		}
		verdicts++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	delete(uploads, bad)
	if len(got) != len(uploads) || verdicts != len(uploads) {
		t.Fatalf("%d reports and %d verdicts after the quarantine, want %d", len(got), verdicts, len(uploads))
	}
	for id, up := range uploads {
		if !bytes.Equal(got[id], up) {
			t.Errorf("report %v: %x, want %x", id, got[id], up)
		}
	}
	if !s.Quarantined("d", bad) || s.Quarantined("d", reportID(1)) {
		t.Error("Quarantined does not tell the quarantined report")
	}
	if err := s.PutReport("d", bad, []byte("again")); !errors.Is(err, ErrQuarantined) {
		t.Fatalf("uploading the quarantined report again: %v", err)
	}
}
