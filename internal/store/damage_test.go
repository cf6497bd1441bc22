package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// damageFixture writes a store of bbolt pages of pageSize bytes
// holding every kind of record — n reports (a fifth of them deleted,
// leaving free pages), verdicts, release records, ledger charges and
// totals, the verify key — and returns its file's bytes.
func damageFixture(t testing.TB, pageSize, n int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: pageSize})
	if err == nil {
		err = db.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []payload.ReportID
	for i := range n {
		id := payload.ReportID{byte(i), byte(i >> 8), 0x5a}
		upload := make([]byte, 20+rng.IntN(pageSize/16))
		for j := range upload {
			upload[j] = byte(rng.Uint32())
		}
		if err := s.PutReport("d", id, upload); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	verdicts := make(map[payload.ReportID][]byte)
	for _, id := range ids[:n/4] {
		verdicts[id] = []byte{1, 1, 0, id[0]}
	}
	if err := s.SaveVerdicts("d", verdicts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteReports("d", ids[n/2:n/2+n/5]); err != nil {
		t.Fatal(err)
	}
	total := ledger.Budget{Epsilon: 10}
	if err := s.SetTotal("d", total); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rel := payload.ReleaseID{byte(i), 0x77}
		if err := s.SaveRelease("d", rel, []byte(fmt.Sprintf("record %d", i))); err != nil {
			t.Fatal(err)
		}
		if err := s.Charge("d", rel, ledger.Budget{Epsilon: 1}, total); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CheckVerifyKey("d", make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAll opens the store at path and reads every record of the fixture
// back, as a string to compare; its error is the first one met.
func readAll(path string) (string, error) {
	s, err := Open(path)
	if err != nil {
		return "", err
	}
	defer s.Close()
	var out strings.Builder
	err = s.Reports("d", func(id payload.ReportID, upload []byte) error {
		fmt.Fprintf(&out, "report %v %x\n", id, upload)
		return nil
	})
	if err != nil {
		return "", err
	}
	var lines []string
	err = s.LoadVerdicts("d", func(id payload.ReportID, rec []byte) error {
		lines = append(lines, fmt.Sprintf("verdict %v %x\n", id, rec))
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(lines)
	out.WriteString(strings.Join(lines, ""))
	err = s.LoadReleases("d", func(id payload.ReleaseID, rec []byte) error {
		charged, err := s.Charged("d", id)
		fmt.Fprintf(&out, "release %v %q charged %v\n", id, rec, charged)
		return err
	})
	if err != nil {
		return "", err
	}
	spent, err := s.Spent("d")
	if err != nil {
		return "", err
	}
	total, found, err := s.Total("d")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&out, "spent %+v total %+v %v\n", spent, total, found)
	return out.String(), s.CheckVerifyKey("d", make([]byte, 32))
}

// checkDamaged opens the file b and reads it all: every record as in
// want, or an error wrapping ErrDamaged that names the file.
func checkDamaged(t *testing.T, dir string, b []byte, want, what string) (damaged bool) {
	t.Helper()
	path := filepath.Join(dir, "damaged.db")
	os.Remove(path)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(path)
	switch {
	case err == nil && got != want:
		t.Fatalf("%s: the store opened and read other records:\n%s\nwant\n%s", what, got, want)
	case err != nil && (!errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path)):
		t.Fatalf("%s: %v, want an error wrapping ErrDamaged naming the file", what, err)
	}
	return err != nil
}

// TestDamagedFileNamedNeverPanics truncates the store file at every
// page boundary and inside pages, and flips a byte at each page header
// and meta field and at 400 random offsets: each time the store
// either opens with every record intact or refuses with ErrDamaged
// naming the file, never panics, faults or drops a record silently.
func TestDamagedFileNamedNeverPanics(t *testing.T) {
	orig := damageFixture(t, 4096, 160)
	dir := t.TempDir()
	want, err := func() (string, error) {
		path := filepath.Join(dir, "intact.db")
		if err := os.WriteFile(path, orig, 0o600); err != nil {
			return "", err
		}
		return readAll(path)
	}()
	if err != nil || !strings.Contains(want, "report") || !strings.Contains(want, "verdict") || !strings.Contains(want, "release") {
		t.Fatalf("the intact fixture: %v\n%s", err, want)
	}
	const page = 4096
	truncated := 0
	for size := 1; size < len(orig); size += 1 + size/3 {
		for _, n := range []int{size, size / page * page} {
			if n > 0 && checkDamaged(t, dir, orig[:n], want, fmt.Sprintf("truncated to %d bytes", n)) {
				truncated++
			}
		}
	}
	if truncated == 0 {
		t.Fatal("no truncation was refused")
	}
	var offsets []int
	for p := 0; p < len(orig); p += page {
		for i := range 16 {
			offsets = append(offsets, p+i)
		}
	}
	for i := range 80 {
		offsets = append(offsets, 16+i, page+16+i)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 400 {
		offsets = append(offsets, rng.IntN(len(orig)))
	}
	flipped := 0
	for _, off := range offsets {
		b := slices.Clone(orig)
		b[off] ^= byte(1 + rng.IntN(255))
		if checkDamaged(t, dir, b, want, fmt.Sprintf("byte %d flipped", off)) {
			flipped++
		}
	}
	// Most of a page is records, each sealed: most flips are refused.
	if flipped < len(offsets)/4 {
		t.Fatalf("%d of %d flipped bytes refused", flipped, len(offsets))
	}
}

// FuzzOpenFile opens arbitrary file contents as a store and reads all of
// it: an error is ErrDamaged or ErrFormat, never a panic or fault.
func FuzzOpenFile(f *testing.F) {
	orig := damageFixture(f, 1024, 6)
	f.Add(orig)
	f.Add(orig[:len(orig)/2])
	f.Add(orig[:2*1024])
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "fuzz.db")
		os.Remove(path)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readAll(path); err != nil && !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrFormat) {
			t.Fatalf("%v, want ErrDamaged or ErrFormat", err)
		}
	})
}
