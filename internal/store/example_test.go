package store_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/server"
)

// A charge made before a crash is still there after reopening.
func Example() {
	dir, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "leader.db")

	s, _ := store.Open(path)
	_ = s.PutReport("ds", protocol.ReportID{1}, []byte("upload"))
	_ = s.Charge("ds", protocol.ReleaseID{1}, server.Budget{Epsilon: 0.5}, server.Budget{Epsilon: 1})
	s.Close()

	s, _ = store.Open(path)
	defer s.Close()
	n, _ := s.NumReports("ds")
	spent, _ := s.Spent("ds")
	fmt.Println(n, spent.Epsilon)
	// Output: 1 0.5
}
