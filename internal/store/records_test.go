package store

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// rawRecords returns the keys and values of dataset's records in bucket,
// as the file holds them.
func rawRecords(t *testing.T, s *Store, bucket []byte, dataset string) (keys, values []string) {
	t.Helper()
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(bucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		return d.ForEach(func(k, v []byte) error {
			keys, values = append(keys, hex.EncodeToString(k)), append(values, hex.EncodeToString(v))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, values
}

// TestRecordsKnownAnswer pins the appended records of FormatVersion 5:
// the encodings, and what PutReport and SaveVerdicts put in the file (a
// report's receipt time is the one ReceivedAt returns). Changing any of
// them is a breaking change: bump FormatVersion and update this test.
func TestRecordsKnownAnswer(t *testing.T) {
	id := reportID(1)
	at := time.Unix(1700000000, 123456789)
	for _, c := range []struct{ name, got, want string }{
		{"key of record 1", hex.EncodeToString(seqKey(1)), "0000000000000001"},
		{"key of record 2^40+5", hex.EncodeToString(seqKey(1<<40 + 5)), "0000010000000005"},
		{"report record", hex.EncodeToString(reportRecord("d", id, at, []byte("upload"))), "01aa0000000000000000000000000000" + "17979cfe3d85cd15" + "75706c6f6164" + "0c21c9f7"},
		{"verdict record", hex.EncodeToString(idRecord("d", id, []byte{1, 1, 0})), "01aa0000000000000000000000000000" + "010100" + "b64eae07"},
		{"sealed record", hex.EncodeToString(Seal("reports/d", seqKey(1), []byte("upload"))), "75706c6f6164" + "6f16853a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%s, want %s", c.got, c.want)
			}
		})
	}

	s, path := openTemp(t)
	for _, up := range []string{"upload", "again"} { // a retry writes nothing
		if err := s.PutReport("d", id, []byte(up)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutReport("d", reportID(2), []byte("second")); err != nil {
		t.Fatal(err)
	}
	keys, values := rawRecords(t, s, reportsBucket, "d")
	times, err := s.ReceivedAt("d", []payload.ReportID{id})
	if err != nil {
		t.Fatal(err)
	}
	want := hex.EncodeToString(reportRecord("d", id, times[0], []byte("upload")))
	if strings.Join(keys, " ") != "0000000000000001 0000000000000002" || values[0] != want || !strings.Contains(values[1], hex.EncodeToString([]byte("second"))) {
		t.Errorf("report records %v = %v; want keys 1 and 2, the first %s", keys, values, want)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutReport("d", id, []byte("after reopening")); err != nil { // the rebuilt index knows it
		t.Fatal(err)
	}
	if again, _ := rawRecords(t, s, reportsBucket, "d"); len(again) != 2 {
		t.Errorf("a retry after reopening wrote a record: keys %v", again)
	}
	for _, rec := range [][]byte{{1, 2, 0}, {1, 1, 0}} {
		if err := s.SaveVerdicts("d", map[payload.ReportID][]byte{id: rec}); err != nil {
			t.Fatal(err)
		}
	}
	keys, values = rawRecords(t, s, verdictsBucket, "d")
	if strings.Join(keys, " ") != "0000000000000001 0000000000000002" || strings.Join(values, " ") != "01aa0000000000000000000000000000010200"+"82a9069e 01aa0000000000000000000000000000010100"+"b64eae07" {
		t.Errorf("verdict records %v = %v", keys, values)
	}
}

// snapshot copies the store's file as of its last commit to a new file,
// as a crash right after that commit would leave it, and returns its path.
func snapshot(t *testing.T, s *Store) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crashed.db")
	if err := s.db.View(func(tx *bolt.Tx) error { return tx.CopyFile(path, 0o600) }); err != nil {
		t.Fatal(err)
	}
	return path
}

// storeState is what a reopened store reads: its reports' uploads and
// its verdicts, by report.
type storeState struct {
	uploads, verdicts map[payload.ReportID]string
	n                 int
}

func readState(t *testing.T, path string) storeState {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := storeState{uploads: map[payload.ReportID]string{}, verdicts: map[payload.ReportID]string{}}
	err = s.Reports("d", func(id payload.ReportID, up []byte) error {
		if _, twice := st.uploads[id]; twice {
			t.Errorf("report %v read twice", id)
		}
		st.uploads[id] = string(up)
		return nil
	})
	if err == nil {
		err = s.LoadVerdicts("d", func(id payload.ReportID, rec []byte) error {
			if _, twice := st.verdicts[id]; twice {
				t.Errorf("verdict of report %v read twice", id)
			}
			st.verdicts[id] = string(rec)
			return nil
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	st.n, _ = s.NumReports("d")
	return st
}

// TestCrashBetweenAppendedRecords: a crash leaves the file as of some
// commit. At each commit of a report's life (uploads stored, the
// helper's tentative verdict, the final verdict, a final verdict
// written again, a rejection without its upload) the reopened store
// reads each report once, with the last verdict record of each; and a
// file holding two records of one report (which PutReport never writes)
// reads the first, the one acknowledged.
func TestCrashBetweenAppendedRecords(t *testing.T) {
	s, path := openTemp(t)
	r1, r2, r3 := reportID(1), reportID(2), reportID(3)
	steps := []struct {
		name     string
		do       func() error
		verdicts map[payload.ReportID]string
	}{
		{"uploads without verdicts", func() error {
			return errorsOf(s.PutReport("d", r1, []byte("u1")), s.PutReport("d", r2, []byte("u2")))
		}, map[payload.ReportID]string{}},
		{"tentative verdict", func() error {
			return s.SaveVerdicts("d", map[payload.ReportID][]byte{r1: []byte("tentative 1")})
		}, map[payload.ReportID]string{r1: "tentative 1"}},
		{"final verdicts", func() error {
			return s.SaveVerdicts("d", map[payload.ReportID][]byte{r1: []byte("final 1"), r2: []byte("final 2")})
		}, map[payload.ReportID]string{r1: "final 1", r2: "final 2"}},
		{"a final verdict again", func() error {
			return s.SaveVerdicts("d", map[payload.ReportID][]byte{r2: []byte("final 2 again")})
		}, map[payload.ReportID]string{r1: "final 1", r2: "final 2 again"}},
		{"a rejection without upload", func() error {
			return s.SaveVerdicts("d", map[payload.ReportID][]byte{r3: []byte("rejected 3")})
		}, map[payload.ReportID]string{r1: "final 1", r2: "final 2 again", r3: "rejected 3"}},
	}
	var crashed []string
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		crashed = append(crashed, snapshot(t, s))
	}
	s.Close()
	uploads := map[payload.ReportID]string{r1: "u1", r2: "u2"}
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			st := readState(t, crashed[i])
			if st.n != 2 || !mapsEqual(st.uploads, uploads) || !mapsEqual(st.verdicts, step.verdicts) {
				t.Errorf("read %d reports %v, verdicts %v; want 2 reports %v, verdicts %v", st.n, st.uploads, st.verdicts, uploads, step.verdicts)
			}
		})
	}

	t.Run("a report recorded twice", func(t *testing.T) {
		rawUpdate(func(tx *bolt.Tx) error {
			_, err := appendRecord(tx, reportsBucket, "d", reportRecord("d", r1, time.Now(), []byte("u1 again")))
			return err
		})(t, path)
		st := readState(t, path)
		if st.n != 2 || !mapsEqual(st.uploads, uploads) {
			t.Errorf("read %d reports %v, want 2: %v", st.n, st.uploads, uploads)
		}
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.Uploads("d", []payload.ReportID{r1}, func(_ payload.ReportID, up []byte) error {
			if string(up) != "u1" {
				t.Errorf("Uploads of report 1: %q, want the first record's u1", up)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func mapsEqual(a, b map[payload.ReportID]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// pagesWritten returns the pages (or runs of pages) the store has
// written to its file since it opened.
func pagesWritten(s *Store) int64 {
	stats := s.db.Stats()
	return stats.TxStats.GetWrite()
}

// TestBatchDirtiesItsBytesInPages: a batch of reports with random IDs
// appended to a store that holds many already writes about its bytes
// over the page size in pages, plus a path to the tail leaf and the
// meta and freelist pages, not a leaf per report (keyed by report ID,
// the batch below would rewrite ≈ 500 of the ≈ 700 leaves); likewise a
// stage's verdicts.
func TestBatchDirtiesItsBytesInPages(t *testing.T) {
	s, _ := openTemp(t)
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	upload := bytes.Repeat([]byte{7}, 100)
	batch := func() []*write {
		b := make([]*write, maxBatch)
		for i := range b {
			var id payload.ReportID
			for j := range id {
				id[j] = byte(rng.Uint32())
			}
			b[i] = &write{dataset: "d", id: id, upload: upload, received: time.Now(), done: make(chan error, 1)}
		}
		return b
	}
	verdicts := func(n int) map[payload.ReportID][]byte {
		records := make(map[payload.ReportID][]byte)
		for _, w := range batch()[:n] {
			records[w.id] = []byte{1, 1, 0}
		}
		return records
	}
	for range 20 {
		s.commitBatch(batch())
		if err := s.SaveVerdicts("d", verdicts(maxBatch)); err != nil {
			t.Fatal(err)
		}
	}
	pageSize := s.db.Info().PageSize
	const elem = 16 + seqLen // bbolt's leaf element header and the key
	for _, c := range []struct {
		name   string
		commit func() error
		bytes  int
	}{
		{"reports", func() error {
			b := batch()
			s.commitBatch(b)
			return <-b[0].done
		}, maxBatch * (elem + reportHeaderLen + len(upload))},
		{"verdicts", func() error { return s.SaveVerdicts("d", verdicts(256)) }, 256 * (elem + idLen + 3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := pagesWritten(s)
			if err := c.commit(); err != nil {
				t.Fatal(err)
			}
			// The records' leaves, the partly filled last leaf, and at
			// most a dozen branch, bucket, freelist and meta pages.
			limit := int64(c.bytes/pageSize + 1 + 12)
			got := pagesWritten(s) - before
			t.Logf("%d pages written, limit %d", got, limit)
			if got > limit {
				t.Errorf("one batch wrote %d pages, want at most %d", got, limit)
			}
		})
	}
}

// BenchmarkIndexMemory reports the heap the in-memory index takes per
// report (index_bytes/report) at 10⁶ reports, the scale of the 10⁶
// simulate goal: grown by PutReport's commits, and as load builds it
// at open, sized for the records.
func BenchmarkIndexMemory(b *testing.B) {
	const n = 1_000_000
	for _, sized := range []bool{false, true} {
		name := map[bool]string{false: "grown", true: "loaded"}[sized]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				x := index{seqs: map[string]map[payload.ReportID]uint64{}}
				if sized {
					x.seqs["d"] = make(map[payload.ReportID]uint64, n)
				}
				added := make(map[indexKey]uint64, 1024)
				rng := rand.New(rand.NewPCG(1, 2))
				for i := range n {
					var id payload.ReportID
					for j := range id {
						id[j] = byte(rng.Uint32())
					}
					added[indexKey{"d", id}] = uint64(i + 1)
					if len(added) == 1024 || i == n-1 {
						x.add(added)
						clear(added)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "index_bytes/report")
				runtime.KeepAlive(&x)
			}
		})
	}
}
