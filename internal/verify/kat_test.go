package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestReportKnownAnswer pins the report format: a report drawn from a fixed
// random stream hashes to a known value and verifies under a fixed key. A
// change of circl's Prio3 or of Version changes it; that is a breaking
// change of stored and sent reports.
func TestReportKnownAnswer(t *testing.T) {
	const want = "faea5f5bf8df767482b499d31391cbeb07c4688070f03ba9b0eec75763949ff9"
	s, err := New(8)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Encode(5, true, rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write(r.Nonce[:])
	h.Write(r.Public)
	h.Write(r.Shares[0])
	h.Write(r.Shares[1])
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("report hash %s, want %s", got, want)
	}
	l, _ := s.NewServer(0, [KeySize]byte{2})
	hp, _ := s.NewServer(1, [KeySize]byte{2})
	if _, err := VerifyPair(l, hp, r); err != nil {
		t.Fatalf("known report rejected: %v", err)
	}
}
