package vdcf

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestReportKnownAnswer pins the report format and the verification
// messages: a report drawn from a fixed random stream, and the two
// servers' messages for it under a fixed key, hash to a known value, and
// the report verifies. A change of the field DCF (fss
// TestGenFieldKnownAnswer), of the share layout, of the challenge
// derivation or of the check is a breaking change of stored and exchanged
// reports: bump Version.
func TestReportKnownAnswer(t *testing.T) {
	const want = "a4adfa6afd1fa345a196d425cd0f9aad14acb30119444b4bcc310271331ca73a"
	s, err := New(8)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Encode(5, true, rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s}
	for id := range f.srv {
		if f.srv[id], err = s.NewServer(id, [KeySize]byte{2}); err != nil {
			t.Fatal(err)
		}
	}
	first, second := f.exchange(t, r, nil)
	h := sha256.New()
	h.Write(r.Nonce[:])
	for id := range r.Shares {
		h.Write(r.Shares[id])
		h.Write(first[id])
		h.Write(second[id])
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("report and messages hash %s, want %s", got, want)
	}
	if _, err := VerifyPair(f.srv[0], f.srv[1], r); err != nil {
		t.Fatalf("known report rejected: %v", err)
	}
}
