package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

func reportID(i byte) protocol.ReportID { return protocol.ReportID{i, 0xaa} }

func TestReportsAndLedgerSurviveReopen(t *testing.T) {
	s, path := openTemp(t)
	for i := byte(1); i <= 5; i++ {
		if err := s.PutReport("d", reportID(i), []byte{i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutReport("d", reportID(3), []byte{3}); err != nil { // a retried upload
		t.Fatal(err)
	}
	total := server.Budget{Epsilon: 1}
	rel := protocol.ReleaseID{7}
	if err := s.Charge("d", rel, server.Budget{Epsilon: 0.6}, total); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []byte
	err = s.Reports("d", func(id protocol.ReportID, upload []byte) error {
		if id != reportID(upload[0]) {
			t.Errorf("report %v holds upload %x", id, upload)
		}
		got = append(got, upload[0])
		return nil
	})
	if err != nil || string(got) != "\x01\x02\x03\x04\x05" {
		t.Fatalf("reports after reopening: %x, %v; want 01..05 once each", got, err)
	}
	if n, err := s.NumReports("d"); n != 5 || err != nil {
		t.Fatalf("NumReports = %d, %v", n, err)
	}
	if spent, err := s.Spent("d"); spent.Epsilon != 0.6 || err != nil {
		t.Fatalf("Spent after reopening = %+v, %v; want ε=0.6", spent, err)
	}
	if err := s.Charge("d", rel, server.Budget{Epsilon: 0.6}, total); err != nil {
		t.Fatalf("charging the same release again: %v", err)
	}
	err = s.Charge("d", protocol.ReleaseID{8}, server.Budget{Epsilon: 0.6}, total)
	if !errors.Is(err, server.ErrBudgetExhausted) {
		t.Fatalf("charge beyond the total: %v, want ErrBudgetExhausted", err)
	}
	if spent, _ := s.Spent("d"); spent.Epsilon != 0.6 {
		t.Fatalf("a refused charge was recorded: spent ε=%g", spent.Epsilon)
	}
	if err := s.Charge("d", protocol.ReleaseID{9}, server.Budget{Epsilon: 0.4}, total); err != nil {
		t.Fatalf("charge up to exactly the total: %v", err)
	}
	if n, _ := s.NumReports("other"); n != 0 {
		t.Fatalf("dataset other has %d reports", n)
	}
}

// TestChargeFollowsAdmit: the store's ledger applies server.Admit, the
// one budget rule: a charged release is free even when its δ, or its ε,
// would not fit again; a new one is refused beyond the total in ε or δ
// (δ > 0 on a pure budget included), and admitted up to rounding.
func TestChargeFollowsAdmit(t *testing.T) {
	s, _ := openTemp(t)
	defer s.Close()
	for _, c := range []struct {
		name               string
		charged            bool
		spent, cost, total server.Budget
	}{
		{"charged, over δ", true, server.Budget{Epsilon: 0.5, Delta: 1e-6}, server.Budget{Epsilon: 0.5, Delta: 1e-6}, server.Budget{Epsilon: 1, Delta: 1e-6}},
		{"charged, over ε", true, server.Budget{Epsilon: 1}, server.Budget{Epsilon: 1}, server.Budget{Epsilon: 1}},
		{"new, over δ", false, server.Budget{Epsilon: 0.1, Delta: 1e-6}, server.Budget{Epsilon: 0.1, Delta: 1e-6}, server.Budget{Epsilon: 1, Delta: 1e-6}},
		{"new, δ > 0 on a pure budget", false, server.Budget{}, server.Budget{Epsilon: 0.1, Delta: 1e-12}, server.Budget{Epsilon: 1}},
		{"new, the rest of ε up to rounding", false, server.Budget{Epsilon: 0.1}, server.Budget{Epsilon: 0.2}, server.Budget{Epsilon: 0.3}},
		{"new, over ε", false, server.Budget{Epsilon: 0.6}, server.Budget{Epsilon: 0.6}, server.Budget{Epsilon: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, next := protocol.ReleaseID{1}, protocol.ReleaseID{2}
			if err := s.Charge(c.name, first, c.spent, server.Budget{Epsilon: 10, Delta: 0.5}); err != nil {
				t.Fatal(err)
			}
			if c.charged {
				next = first
			}
			want := server.Admit(c.charged, c.spent, c.cost, c.total)
			got := s.Charge(c.name, next, c.cost, c.total)
			if (got == nil) != (want == nil) || errors.Is(got, server.ErrBudgetExhausted) != errors.Is(want, server.ErrBudgetExhausted) {
				t.Fatalf("Charge: %v; Admit: %v", got, want)
			}
		})
	}
}

func TestBadCostRefused(t *testing.T) {
	s, _ := openTemp(t)
	defer s.Close()
	for _, c := range []server.Budget{{Epsilon: -1}, {Epsilon: 1, Delta: 1}} {
		if err := s.Charge("d", protocol.ReleaseID{1}, c, server.Budget{Epsilon: 10}); err == nil {
			t.Errorf("cost %+v accepted", c)
		}
	}
}

func TestFileMode(t *testing.T) {
	s, path := openTemp(t)
	s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("store file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestReleasesSurviveReopen(t *testing.T) {
	s, path := openTemp(t)
	rec := &server.ReleaseRecord{
		Dataset: "d", Release: protocol.ReleaseID{3}, Seed: [32]byte{1, 2, 3},
		Mechanism:  mechanism.Params{Name: "tree", Bins: 8, Epsilon: 1},
		Components: []protocol.Component{protocol.Count}, Reports: []protocol.ReportID{reportID(1), reportID(2)},
	}
	if err := s.SaveRelease(rec); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []*server.ReleaseRecord
	if err := s.LoadReleases("d", func(r *server.ReleaseRecord) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Seed != rec.Seed || got[0].Release != rec.Release || !slices.Equal(got[0].Reports, rec.Reports) || got[0].Mechanism != rec.Mechanism {
		t.Fatalf("releases after reopening: %+v, want %+v", got, rec)
	}
	if err := s.LoadReleases("other", func(*server.ReleaseRecord) error { t.Fatal("dataset other has a release"); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestCharged(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rel := protocol.ReleaseID{9}
	if c, err := s.Charged("d", rel); c || err != nil {
		t.Fatalf("before any charge: %v, %v", c, err)
	}
	if err := s.Charge("d", rel, server.Budget{Epsilon: 1}, server.Budget{Epsilon: 1}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Charged("d", rel); !c || err != nil {
		t.Fatalf("after the charge: %v, %v", c, err)
	}
	if c, _ := s.Charged("d", protocol.ReleaseID{8}); c {
		t.Fatal("another release reported charged")
	}
}

func TestOpenRefusesUnsafeOrForeignFiles(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		want    error
	}{
		{"group-readable", createWithMode(0o640), ErrPermissions},
		{"world-writable", createWithMode(0o602), ErrPermissions},
		{"written before format versions", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Update(func(tx *bolt.Tx) error {
				_, err := tx.CreateBucket(reportsBucket)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}, ErrFormat},
		{"another format version", func(t *testing.T, path string) {
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			err = s.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(metaBucket).Put(formatKey, []byte{FormatVersion + 1})
			})
			s.Close()
			if err != nil {
				t.Fatal(err)
			}
		}, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.db")
			tt.prepare(t, path)
			s, err := Open(path)
			if err == nil {
				s.Close()
				t.Fatalf("Open accepted the file")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open: %v, want an error wrapping %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// createWithMode returns a preparation that creates a store and then
// gives its file mode perm.
func createWithMode(perm os.FileMode) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenCreatesPrivateVersionedFile(t *testing.T) {
	s, path := openTemp(t)
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("new store has mode %v, want 0600", perm)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(metaBucket).Get(formatKey); len(v) != 1 || v[0] != FormatVersion {
			t.Errorf("format version %v, want %d", v, FormatVersion)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenLockedStore: a store file another server holds open is
// refused with ErrLocked, saying what to do, not bbolt's "timeout".
func TestOpenLockedStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leader.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	second, err := Open(path)
	if err == nil {
		second.Close()
		t.Fatal("a second Open of a held store succeeded")
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another fedecdf server") {
		t.Fatalf("second Open: %v; want ErrLocked naming %s and another server", err, path)
	}
}
