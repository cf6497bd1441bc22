package store

import (
	"path/filepath"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// BenchmarkOpen opens a store of 20 000 reports of 900 bytes (a verified
// dcf upload at 1024 bins) with a verdict each.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "server.db")
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	upload := make([]byte, 900)
	for start := 0; start < 20000; start += 1000 {
		done := make(chan error, 1000)
		for i := start; i < start+1000; i++ {
			go func() {
				id := payload.ReportID{byte(i), byte(i >> 8), byte(i >> 16), 1}
				err := s.PutReport("d", id, upload)
				if err == nil {
					err = s.SaveVerdicts("d", map[payload.ReportID][]byte{id: {1, 1, 0}})
				}
				done <- err
			}()
		}
		for range 1000 {
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
	}
	s.Close()
	for b.Loop() {
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
