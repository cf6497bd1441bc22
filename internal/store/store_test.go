package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
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

func reportID(i byte) payload.ReportID { return payload.ReportID{i, 0xaa} }

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
	total := ledger.Budget{Epsilon: 1}
	rel := payload.ReleaseID{7}
	if err := s.Charge("d", rel, ledger.Budget{Epsilon: 0.6}, total); err != nil {
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
	err = s.Reports("d", func(id payload.ReportID, upload []byte) error {
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
	if err := s.Charge("d", rel, ledger.Budget{Epsilon: 0.6}, total); err != nil {
		t.Fatalf("charging the same release again: %v", err)
	}
	err = s.Charge("d", payload.ReleaseID{8}, ledger.Budget{Epsilon: 0.6}, total)
	if !errors.Is(err, ledger.ErrBudgetExhausted) {
		t.Fatalf("charge beyond the total: %v, want ErrBudgetExhausted", err)
	}
	if spent, _ := s.Spent("d"); spent.Epsilon != 0.6 {
		t.Fatalf("a refused charge was recorded: spent ε=%g", spent.Epsilon)
	}
	if err := s.Charge("d", payload.ReleaseID{9}, ledger.Budget{Epsilon: 0.4}, total); err != nil {
		t.Fatalf("charge up to exactly the total: %v", err)
	}
	if n, _ := s.NumReports("other"); n != 0 {
		t.Fatalf("dataset other has %d reports", n)
	}
}

// TestChargeFollowsAdmit: the store's ledger applies ledger.Admit, the
// one budget rule: a charged release is free even when its δ, or its ε,
// would not fit again; a new one is refused beyond the total in ε or δ
// (δ > 0 on a pure budget included), and admitted up to rounding.
func TestChargeFollowsAdmit(t *testing.T) {
	s, _ := openTemp(t)
	defer s.Close()
	for _, c := range []struct {
		name               string
		charged            bool
		spent, cost, total ledger.Budget
	}{
		{"charged, over δ", true, ledger.Budget{Epsilon: 0.5, Delta: 1e-6}, ledger.Budget{Epsilon: 0.5, Delta: 1e-6}, ledger.Budget{Epsilon: 1, Delta: 1e-6}},
		{"charged, over ε", true, ledger.Budget{Epsilon: 1}, ledger.Budget{Epsilon: 1}, ledger.Budget{Epsilon: 1}},
		{"new, over δ", false, ledger.Budget{Epsilon: 0.1, Delta: 1e-6}, ledger.Budget{Epsilon: 0.1, Delta: 1e-6}, ledger.Budget{Epsilon: 1, Delta: 1e-6}},
		{"new, δ > 0 on a pure budget", false, ledger.Budget{}, ledger.Budget{Epsilon: 0.1, Delta: 1e-12}, ledger.Budget{Epsilon: 1}},
		{"new, the rest of ε up to rounding", false, ledger.Budget{Epsilon: 0.1}, ledger.Budget{Epsilon: 0.2}, ledger.Budget{Epsilon: 0.3}},
		{"new, over ε", false, ledger.Budget{Epsilon: 0.6}, ledger.Budget{Epsilon: 0.6}, ledger.Budget{Epsilon: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, next := payload.ReleaseID{1}, payload.ReleaseID{2}
			if err := s.Charge(c.name, first, c.spent, ledger.Budget{Epsilon: 10, Delta: 0.5}); err != nil {
				t.Fatal(err)
			}
			if c.charged {
				next = first
			}
			want := ledger.Admit(c.charged, c.spent, c.cost, c.total)
			got := s.Charge(c.name, next, c.cost, c.total)
			if (got == nil) != (want == nil) || errors.Is(got, ledger.ErrBudgetExhausted) != errors.Is(want, ledger.ErrBudgetExhausted) {
				t.Fatalf("Charge: %v; Admit: %v", got, want)
			}
		})
	}
}

func TestBadCostRefused(t *testing.T) {
	s, _ := openTemp(t)
	defer s.Close()
	for _, c := range []ledger.Budget{{Epsilon: -1}, {Epsilon: 1, Delta: 1}} {
		if err := s.Charge("d", payload.ReleaseID{1}, c, ledger.Budget{Epsilon: 10}); err == nil {
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

// savedRelease is a stored release record: the store keeps the server's
// encoding (server.ReleaseRecord) as opaque bytes.
type savedRelease struct {
	id     payload.ReleaseID
	record []byte
}

func TestReleasesSurviveReopen(t *testing.T) {
	s, path := openTemp(t)
	saved := []savedRelease{{payload.ReleaseID{3}, []byte("seed and release 3")}, {payload.ReleaseID{1}, []byte("release 1")}}
	for _, r := range saved {
		if err := s.SaveRelease("d", r.id, r.record); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveRelease("d", saved[0].id, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	saved[0].record = []byte("replaced")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []savedRelease
	if err := s.LoadReleases("d", func(id payload.ReleaseID, b []byte) error { got = append(got, savedRelease{id, b}); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []savedRelease{saved[1], saved[0]} // in release ID order
	if !slices.EqualFunc(got, want, func(a, b savedRelease) bool { return a.id == b.id && string(a.record) == string(b.record) }) {
		t.Fatalf("releases after reopening: %+v, want %+v", got, want)
	}
	if err := s.LoadReleases("other", func(payload.ReleaseID, []byte) error { t.Fatal("dataset other has a release"); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestCharged(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rel := payload.ReleaseID{9}
	if c, err := s.Charged("d", rel); c || err != nil {
		t.Fatalf("before any charge: %v, %v", c, err)
	}
	if err := s.Charge("d", rel, ledger.Budget{Epsilon: 1}, ledger.Budget{Epsilon: 1}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Charged("d", rel); !c || err != nil {
		t.Fatalf("after the charge: %v, %v", c, err)
	}
	if c, _ := s.Charged("d", payload.ReleaseID{8}); c {
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
		{"written before format versions", rawUpdate(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket(reportsBucket)
			return err
		}), ErrFormat},
		{"format 3, reports keyed by report ID", rawUpdate(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucket(metaBucket)
			if err == nil {
				err = meta.Put(formatKey, []byte{3})
			}
			var d *bolt.Bucket
			if err == nil {
				d, err = tx.CreateBucket(reportsBucket)
			}
			if err == nil {
				d, err = d.CreateBucket([]byte("d"))
			}
			if err == nil {
				id := reportID(1)
				err = d.Put(id[:], []byte("upload"))
			}
			return err
		}), ErrFormat},
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
			if tt.want == ErrFormat && !strings.Contains(err.Error(), "start the server on a new store file") && !strings.Contains(err.Error(), "or start on a new store file") {
				t.Errorf("error %q does not say what to do", err)
			}
		})
	}
}

// rawUpdate returns a preparation that writes the file at path with
// bbolt directly, in one transaction fn, as another program might.
func rawUpdate(fn func(tx *bolt.Tx) error) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		db, err := bolt.Open(path, 0o600, nil)
		if err == nil {
			err = db.Update(fn)
			err = errors.Join(err, db.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
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
		if v := tx.Bucket(metaBucket).Get(formatKey); !bytes.Equal(v, Seal("meta", formatKey, []byte{FormatVersion})) {
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

// TestGroupCommit: concurrent PutReport calls all return after their
// writes are committed (each is in the file after reopening), a write
// that cannot be stored (a dataset without a name) fails alone while
// the others in its batch are stored, and PutReport after Close is
// refused with ErrClosed.
func TestGroupCommit(t *testing.T) {
	s, path := openTemp(t)
	const n = 500
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			dataset := "d"
			if i == n/2 {
				dataset = "" // bbolt refuses a bucket without a name
			}
			errs[i] = s.PutReport(dataset, payload.ReportID{byte(i), byte(i >> 8)}, []byte{byte(i)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == n/2) {
			t.Errorf("report %d: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReport("d", payload.ReportID{1}, []byte{1}); !errors.Is(err, ErrClosed) { // one it holds
		t.Fatalf("PutReport after Close: %v, want ErrClosed", err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.NumReports("d"); got != n-1 || err != nil {
		t.Fatalf("%d reports after reopening (%v), want %d", got, err, n-1)
	}
}

// A report's receipt time is its first store, kept across a re-store
// and a reopen; DeleteReports removes the named reports (and their
// times) of one dataset only, counting those it held.
func TestReceivedAtAndDeleteReports(t *testing.T) {
	s, path := openTemp(t)
	before := time.Now()
	for i := byte(1); i <= 3; i++ {
		for _, d := range []string{"d", "e"} {
			if err := s.PutReport(d, reportID(i), []byte{i}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := []payload.ReportID{reportID(1), reportID(2), reportID(3), reportID(9)}
	first, err := s.ReceivedAt("d", ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range first[:3] {
		if at.Before(before.Add(-time.Second)) || at.After(time.Now()) {
			t.Errorf("report %d received at %v, not during the test", i+1, at)
		}
	}
	if !first[3].IsZero() {
		t.Errorf("an unknown report has receipt time %v", first[3])
	}
	if err := s.PutReport("d", reportID(2), []byte{2}); err != nil { // a retried upload
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	again, err := s.ReceivedAt("d", ids)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ids {
		if !again[i].Equal(first[i]) {
			t.Errorf("report %v: receipt time %v after a re-store and reopen, first %v", ids[i], again[i], first[i])
		}
	}
	n, err := s.DeleteReports("d", []payload.ReportID{reportID(1), reportID(3), reportID(9), reportID(3)})
	if err != nil || n != 2 {
		t.Fatalf("DeleteReports: %d, %v; want 2 deleted", n, err)
	}
	for _, c := range []struct {
		dataset string
		want    int
	}{{"d", 1}, {"e", 3}} {
		if got, err := s.NumReports(c.dataset); err != nil || got != c.want {
			t.Errorf("dataset %s holds %d reports (%v), want %d", c.dataset, got, err, c.want)
		}
	}
	if left, err := s.ReceivedAt("d", ids[:1]); err != nil || !left[0].IsZero() {
		t.Errorf("a deleted report keeps its receipt time %v (%v)", left, err)
	}
}

// TestTotalAndDeleteSurviveReopen: the total budget a ledger is kept
// under, and a deleted release record, are as left after a reopen; a
// dataset without a recorded total says so, and an invalid total is
// refused.
func TestTotalAndDeleteSurviveReopen(t *testing.T) {
	s, path := openTemp(t)
	if _, found, err := s.Total("d"); found || err != nil {
		t.Fatalf("a new store's total: found %v, %v", found, err)
	}
	want := ledger.Budget{Epsilon: 4, Delta: 1e-6}
	if err := s.SetTotal("d", want); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTotal("d", ledger.Budget{Epsilon: -1}); err == nil {
		t.Error("a negative total was recorded")
	}
	for _, id := range []payload.ReleaseID{{1}, {2}} {
		if err := s.SaveRelease("d", id, []byte{id[0]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRelease("d", payload.ReleaseID{1}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRelease("other", payload.ReleaseID{1}); err != nil {
		t.Errorf("deleting from a dataset without releases: %v", err)
	}
	s.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, found, err := s.Total("d"); !found || err != nil || got != want {
		t.Errorf("reopened total %+v (found %v, %v), want %+v", got, found, err, want)
	}
	var ids []payload.ReleaseID
	if err := s.LoadReleases("d", func(id payload.ReleaseID, _ []byte) error { ids = append(ids, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []payload.ReleaseID{{2}}) {
		t.Errorf("releases after deleting {1}: %v", ids)
	}
}

// TestUploadsReadsBackByID: Uploads returns the recorded upload of each
// asked report, in the order asked, and fails naming a report it does not
// hold (another dataset's, or never recorded).
func TestUploadsReadsBackByID(t *testing.T) {
	s, _ := openTemp(t)
	for i := byte(1); i <= 3; i++ {
		if err := s.PutReport("d", reportID(i), []byte{i, i}); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	err := s.Uploads("d", []payload.ReportID{reportID(3), reportID(1)}, func(id payload.ReportID, b []byte) error {
		if b[0] != id[0] {
			t.Errorf("report %v: upload %v", id, b)
		}
		got = append(got, b[0])
		return nil
	})
	if err != nil || string(got) != "\x03\x01" {
		t.Fatalf("Uploads of reports 3, 1: %v, %v", got, err)
	}
	for _, c := range []struct {
		dataset string
		id      payload.ReportID
	}{{"d", reportID(4)}, {"e", reportID(1)}} {
		err := s.Uploads(c.dataset, []payload.ReportID{c.id}, func(payload.ReportID, []byte) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.id.String()) {
			t.Errorf("Uploads of report %v of dataset %q: %v, want an error naming it", c.id, c.dataset, err)
		}
	}
}

// TestOpenRefusesDamagedRecords: a report record too short to hold its
// report ID and receipt time, or under a key that is no sequence number,
// is refused at open, naming the file and the dataset.
func TestOpenRefusesDamagedRecords(t *testing.T) {
	for _, c := range []struct{ name, key, value string }{
		{"short record", "\x00\x00\x00\x00\x00\x00\x00\x01", "short"},
		{"key of 16 bytes", string(make([]byte, 16)), string(make([]byte, 40))},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, path := openTemp(t)
			err := s.db.Update(func(tx *bolt.Tx) error {
				d, err := tx.Bucket(reportsBucket).CreateBucket([]byte("d"))
				if err != nil {
					return err
				}
				return d.Put([]byte(c.key), []byte(c.value))
			})
			s.Close()
			if err != nil {
				t.Fatal(err)
			}
			s, err = Open(path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a damaged record")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `dataset "d"`) || !strings.Contains(err.Error(), "damaged") {
				t.Errorf("Open: %v; want an error naming the file, the dataset and the damage", err)
			}
		})
	}
}
