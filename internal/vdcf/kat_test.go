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
		{"count and label", false, "3a8f70b854567a4b3d08f3b017691cf7ae09103bb2ee716d1ade51c7edae824a"},
		{"with probability", true, "c57937586f1b5f41d1775914ce6bd3854627f6a246cfc670656282fcf41cc477"},
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
