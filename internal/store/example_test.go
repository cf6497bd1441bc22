package store_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/server"
)

// A charge made before a crash is still there after reopening.
func Example() {
	dir, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "leader.db")

	s, _ := store.Open(path)
	_ = s.PutReport("ds", payload.ReportID{1}, []byte("upload"))
	_ = s.Charge("ds", payload.ReleaseID{1}, ledger.Budget{Epsilon: 0.5}, ledger.Budget{Epsilon: 1})
	s.Close()

	s, _ = store.Open(path)
	defer s.Close()
	n, _ := s.NumReports("ds")
	spent, _ := s.Spent("ds")
	fmt.Println(n, spent.Epsilon)
	// Output: 1 0.5
}

// A release's secret seed, saved before the release is acknowledged, is
// loaded back after a restart, so the release answers with the same noise.
func ExampleStore_SaveRelease() {
	dir, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "helper.db")

	s, _ := store.Open(path)
	rec := &server.ReleaseRecord{
		Dataset: "ds", Release: payload.ReleaseID{1}, Seed: [32]byte{42},
		Mechanism:  mechanism.Params{Name: "tree", Bins: 64, Epsilon: 1},
		Components: []payload.Component{payload.Count}, Reports: []payload.ReportID{{7}},
	}
	b, _ := rec.MarshalBinary()
	_ = s.SaveRelease(rec.Dataset, rec.Release, b)
	s.Close()

	s, _ = store.Open(path)
	defer s.Close()
	_ = s.LoadReleases("ds", func(id payload.ReleaseID, b []byte) error {
		r, _ := server.ParseReleaseRecord(b)
		fmt.Println(id, r.Seed[0], len(r.Reports))
		return nil
	})
	// Output: 01000000000000000000000000000000 42 1
}
