package store_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
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

// A release's record (with its secret seed, encoded by the server),
// saved before the release is acknowledged, is loaded back after a
// restart, so the release answers with the same noise.
func ExampleStore_SaveRelease() {
	dir, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "helper.db")

	s, _ := store.Open(path)
	_ = s.SaveRelease("ds", payload.ReleaseID{1}, []byte("record of release 1"))
	s.Close()

	s, _ = store.Open(path)
	defer s.Close()
	_ = s.LoadReleases("ds", func(id payload.ReleaseID, b []byte) error {
		fmt.Printf("%v %s\n", id, b)
		return nil
	})
	// Output: 01000000000000000000000000000000 record of release 1
}
