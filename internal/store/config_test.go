package store

import (
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestConfigSurvivesReopen: a new store has no configuration record; the
// one recorded is read back after reopening, and replaced by the next.
// HasReleases sees a release record of its dataset only.
func TestConfigSurvivesReopen(t *testing.T) {
	s, path := openTemp(t)
	if _, found, err := s.Config(); err != nil || found {
		t.Fatalf("a new store: found=%v, %v; want no record", found, err)
	}
	for _, rec := range []string{`{"bins":64}`, `{"bins":128}`} {
		if err := s.SetConfig([]byte(rec)); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		var err error
		if s, err = Open(path); err != nil {
			t.Fatal(err)
		}
		got, found, err := s.Config()
		if err != nil || !found || string(got) != rec {
			t.Fatalf("after reopening: %q, found=%v, %v; want %q", got, found, err, rec)
		}
	}
	defer s.Close()
	for _, c := range []struct {
		save, ask string
		want      bool
	}{{"", "d", false}, {"d", "other", false}, {"d", "d", true}} {
		if c.save != "" {
			if err := s.SaveRelease(c.save, payload.ReleaseID{1}, []byte("r")); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.HasReleases(c.ask); err != nil || got != c.want {
			t.Errorf("HasReleases(%q) after saving a release of %q: %v, %v; want %v", c.ask, c.save, got, err, c.want)
		}
	}
}
