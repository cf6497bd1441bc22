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
	for _, tc := range []struct {
		name string
		prob bool
		want string
	}{
		{"count and label", false, "2bba0664f1d0fbe8c914d45af9181a90cdca0fc858784200709ca329cc37a20b"},
		{"with probability", true, "6d99c53152d64a631ad0b46663695d1ffc08bd2db15e34f3c87ce8a20d0920e1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(8)
			if tc.prob {
				s, err = NewWithProbability(8)
			}
			if err != nil {
				t.Fatal(err)
			}
			f := &fixture{s: s}
			for id := range f.srv {
				if f.srv[id], err = s.NewServer(id, [KeySize]byte{2}); err != nil {
					t.Fatal(err)
				}
			}
			var r Report
			if tc.prob {
				r, err = s.EncodeProbability(5, true, 3<<30, rand.NewChaCha8([32]byte{1}))
			} else {
				r, err = s.Encode(5, true, rand.NewChaCha8([32]byte{1}))
			}
			if err != nil {
				t.Fatal(err)
			}
			first, second := f.exchange(t, r, nil)
			h := sha256.New()
			h.Write(r.Nonce[:])
			for id := range r.Shares {
				h.Write(r.Shares[id])
				h.Write(first[id])
				h.Write(second[id])
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != tc.want {
				t.Errorf("report and messages hash %s, want %s", got, tc.want)
			}
			if _, err := VerifyPair(f.srv[0], f.srv[1], r); err != nil {
				t.Fatalf("known report rejected: %v", err)
			}
		})
	}
}
