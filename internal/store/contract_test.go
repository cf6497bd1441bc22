package store

// The contract suite: every test of the stores' behaviour runs against
// the bbolt Store and the PostgreSQL store (forEachBackend), the latter
// on a schema of its own in the database of FEDECDF_TEST_POSTGRES
// (package pgtest: skipped without it, a failure under CI=true).

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// fixture is one test's store: openErr opens it (creating it the first
// time), name is how its errors name it.
type fixture struct {
	name    string
	spec    string // the store's --store value: the file, or the DSN
	openErr func() (Backend, error)
}

// open opens the fixture's store, failing t on an error.
func (f fixture) open(t *testing.T) Backend {
	t.Helper()
	s, err := f.openErr()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forEachBackend runs test against a new bbolt file and a new
// PostgreSQL schema.
func forEachBackend(t *testing.T, test func(t *testing.T, f fixture)) {
	t.Run("bbolt", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "server.db")
		test(t, fixture{name: path, spec: path, openErr: func() (Backend, error) { return Open(path) }})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Schema(t)
		test(t, fixture{name: redact(dsn), spec: dsn, openErr: func() (Backend, error) { return OpenPostgres(dsn, "") }})
	})
}

// rawVerifyKey returns the verify key record of dataset as the store
// holds it.
func rawVerifyKey(t *testing.T, s Backend, dataset string) []byte {
	t.Helper()
	var got []byte
	var err error
	switch s := s.(type) {
	case *Store:
		err = s.db.View(func(tx *bolt.Tx) error {
			got = bytes.Clone(tx.Bucket(verifyKeyBucket).Get([]byte(dataset)))
			return nil
		})
	case *Postgres:
		err = s.pool.QueryRow(context.Background(), `SELECT rec FROM fedecdf_verify_keys WHERE dataset = $1`, dataset).Scan(&got)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, err = Unseal(string(verifyKeyBucket), []byte(dataset), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestReportsAndLedgerSurviveReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
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

		s = f.open(t)
		defer s.Close()
		var got []byte
		err := s.Reports("d", func(id payload.ReportID, upload []byte) error {
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
	})
}

// TestChargeFollowsAdmit: the store's ledger applies ledger.Admit, the
// one budget rule: a charged release is free even when its δ, or its ε,
// would not fit again; a new one is refused beyond the total in ε or δ
// (δ > 0 on a pure budget included), and admitted up to rounding.
func TestChargeFollowsAdmit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
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
	})
}

func TestBadCostRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		defer s.Close()
		for _, c := range []ledger.Budget{{Epsilon: -1}, {Epsilon: 1, Delta: 1}} {
			if err := s.Charge("d", payload.ReleaseID{1}, c, ledger.Budget{Epsilon: 10}); err == nil {
				t.Errorf("cost %+v accepted", c)
			}
		}
	})
}

func TestReleasesSurviveReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
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
		s = f.open(t)
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
	})
}

func TestCharged(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
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
	})
}

// TestReleasesCounted: the release count of a ledger (what the servers
// compare to find a store restored from an older backup) counts each
// release charged once, per dataset, grows with each new charge only
// (not with a repeated or refused one), and survives a reopen.
func TestReleasesCounted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		count := func(dataset string, want uint64) {
			t.Helper()
			if n, err := s.Releases(dataset); n != want || err != nil {
				t.Fatalf("dataset %q: %d releases, %v; want %d", dataset, n, err, want)
			}
		}
		count("d", 0)
		total := ledger.Budget{Epsilon: 1}
		for i, rel := range []payload.ReleaseID{{1}, {2}, {1}} { // the third: a repeat
			if err := s.Charge("d", rel, ledger.Budget{Epsilon: 0.25}, total); err != nil {
				t.Fatalf("charge %d: %v", i, err)
			}
		}
		if err := s.Charge("d", payload.ReleaseID{3}, ledger.Budget{Epsilon: 0.75}, total); !errors.Is(err, ledger.ErrBudgetExhausted) {
			t.Fatalf("charge beyond the budget: %v", err)
		}
		if err := s.Charge("e", payload.ReleaseID{1}, ledger.Budget{Epsilon: 0.25}, total); err != nil {
			t.Fatal(err)
		}
		count("d", 2)
		count("e", 1)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = f.open(t)
		defer s.Close()
		count("d", 2)
		count("x", 0)
	})
}

// TestOpenLockedStore: a store another server holds open (a bbolt
// file, a PostgreSQL database or schema) is refused with ErrLocked
// naming it, not bbolt's "timeout" (the command line says what to do:
// cmd/fedecdf TestHints).
func TestOpenLockedStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		defer s.Close()
		second, err := f.openErr()
		if err == nil {
			second.Close()
			t.Fatal("a second Open of a held store succeeded")
		}
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), f.name) {
			t.Fatalf("second Open: %v; want ErrLocked naming %s", err, f.name)
		}
	})
}

// TestGroupCommit: concurrent PutReport calls all return after their
// writes are committed (each is in the file after reopening), a write
// that cannot be stored (a dataset without a name) fails alone while
// the others in its batch are stored, and PutReport after Close is
// refused with ErrClosed.
func TestGroupCommit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		const n = 500
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				dataset := "d"
				if i == n/2 {
					dataset = "" // both stores refuse a dataset without a name
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
		s = f.open(t)
		defer s.Close()
		if got, err := s.NumReports("d"); got != n-1 || err != nil {
			t.Fatalf("%d reports after reopening (%v), want %d", got, err, n-1)
		}
	})
}

// A report's receipt time is its first store, kept across a re-store
// and a reopen; DeleteReports removes the named reports (and their
// times) of one dataset only, counting those it held.
func TestReceivedAtAndDeleteReports(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
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
		s = f.open(t)
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
	})
}

// TestTotalAndDeleteSurviveReopen: the total budget a ledger is kept
// under, and a deleted release record, are as left after a reopen; a
// dataset without a recorded total says so, and an invalid total is
// refused.
func TestTotalAndDeleteSurviveReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
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
		s = f.open(t)
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
	})
}

// TestUploadsReadsBackByID: Uploads returns the recorded upload of each
// asked report, in the order asked, and fails naming a report it does not
// hold (another dataset's, or never recorded).
func TestUploadsReadsBackByID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
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
	})
}

// TestVerdictsSurviveReopen: saved verdicts are loaded back after the
// store is closed and opened again, a later record replacing an earlier
// one of the same report, per dataset.
func TestVerdictsSurviveReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		for _, save := range []map[payload.ReportID][]byte{
			{reportID(1): {1, 2, 0}, reportID(2): {1, 2, 3}},
			{reportID(2): {1, 1, 3}},
		} {
			if err := s.SaveVerdicts("d", save); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveVerdicts("other", map[payload.ReportID][]byte{reportID(3): {9}}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = f.open(t)
		defer s.Close()
		got := map[payload.ReportID][]byte{}
		if err := s.LoadVerdicts("d", func(id payload.ReportID, rec []byte) error { got[id] = rec; return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !bytes.Equal(got[reportID(1)], []byte{1, 2, 0}) || !bytes.Equal(got[reportID(2)], []byte{1, 1, 3}) {
			t.Errorf("loaded %v", got)
		}
	})
}

// TestCheckVerifyKey: the first key is recorded (as its version byte and
// the key: a known answer), the same key passes again, also after a
// reopen, and another is refused with ErrVerifyKeyChanged.
func TestCheckVerifyKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		key := bytes.Repeat([]byte{7}, 32)
		if err := s.CheckVerifyKey("d", key); err != nil {
			t.Fatal(err)
		}
		if got, want := rawVerifyKey(t, s, "d"), append([]byte{1}, key...); !bytes.Equal(got, want) {
			t.Errorf("stored key record %x, want %x", got, want)
		}
		s.Close()
		s = f.open(t)
		defer s.Close()
		if err := s.CheckVerifyKey("d", key); err != nil {
			t.Errorf("same key again: %v", err)
		}
		other := bytes.Repeat([]byte{8}, 32)
		if err := s.CheckVerifyKey("d", other); err != nil {
			t.Errorf("another key before any verdict: %v, want it to replace the first", err)
		}
		if got, want := rawVerifyKey(t, s, "d"), append([]byte{1}, other...); !bytes.Equal(got, want) {
			t.Errorf("stored key record %x after the replacement, want %x", got, want)
		}
		if err := s.SaveVerdicts("d", map[payload.ReportID][]byte{reportID(1): {1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckVerifyKey("d", key); !errors.Is(err, ErrVerifyKeyChanged) {
			t.Errorf("another key once a verdict is stored: %v, want ErrVerifyKeyChanged", err)
		}
		if err := s.CheckVerifyKey("e", key); err != nil {
			t.Errorf("another dataset's key: %v", err)
		}
	})
}

// TestGroupCommitMixesVerdicts: verdicts saved while reports are being
// stored share their commits and are all loaded back, and a verdict
// write that cannot be stored fails alone.
func TestGroupCommitMixesVerdicts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, f fixture) {
		s := f.open(t)
		defer s.Close()
		const n = 200
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				id := payload.ReportID{byte(i), byte(i >> 8)}
				switch {
				case i == n/2:
					errs[i] = s.SaveVerdicts("", map[payload.ReportID][]byte{id: {1}}) // both stores refuse a dataset without a name
				case i%2 == 0:
					errs[i] = s.SaveVerdicts("d", map[payload.ReportID][]byte{id: {byte(i)}})
				default:
					errs[i] = s.PutReport("d", id, []byte{byte(i)})
				}
			})
		}
		wg.Wait()
		verdicts := 0
		for i, err := range errs {
			if (err != nil) != (i == n/2) {
				t.Errorf("write %d: %v", i, err)
			}
		}
		err := s.LoadVerdicts("d", func(id payload.ReportID, rec []byte) error {
			if rec[0] != id[0] {
				t.Errorf("report %v: verdict %v", id, rec)
			}
			verdicts++
			return nil
		})
		if reports, _ := s.NumReports("d"); err != nil || verdicts != n/2-1 || reports != n/2 {
			t.Errorf("loaded %d verdicts and %d reports (%v), want %d and %d", verdicts, reports, err, n/2-1, n/2)
		}
	})
}
