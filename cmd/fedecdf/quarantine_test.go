package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
)

// TestServerQuarantine: "server quarantine" sets the named report aside
// in the store of the manifest's dataset (an upload of it is refused
// after), and refuses a malformed report ID.
func TestServerQuarantine(t *testing.T) {
	m, err := runManifest(t)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest, path := filepath.Join(dir, "manifest.json"), filepath.Join(dir, "leader.db")
	if err := m.Write(manifest); err != nil {
		t.Fatal(err)
	}
	id := payload.ReportID{0x3f, 0x2a}
	s, err := store.Open(path)
	if err == nil {
		err = s.PutReport(m.Dataset, id, []byte("upload"))
		s.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := runRoot("server", "quarantine", "--store", path, "--manifest", manifest, id.String())
	if err != nil || !strings.Contains(out, "1 report of dataset") || !strings.Contains(out, "1 stored record deleted") {
		t.Fatalf("quarantine: %q, %v", out, err)
	}
	if s, err = store.Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.NumReports(m.Dataset); n != 0 || !errors.Is(s.PutReport(m.Dataset, id, []byte("again")), store.ErrQuarantined) {
		t.Fatalf("after the quarantine: %d reports, and the report is not refused", n)
	}
	if _, err := runRoot("server", "quarantine", "--store", path, "--manifest", manifest, "3f2a"); err == nil || !strings.Contains(err.Error(), "not 16 hexadecimal bytes") {
		t.Fatalf("a short report ID: %v", err)
	}
}
