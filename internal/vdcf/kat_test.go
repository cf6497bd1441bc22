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
// the report verifies; the shares have the pinned lengths. A change of
// the field DCF (fss TestGenFieldKnownAnswer), of the share layout, of the
// seeds' expansion, of the challenge derivation or of the check is a
// breaking change of stored and exchanged reports: bump Version.
func TestReportKnownAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		prob  bool
		sizes [2]int // the leader's and the helper's share
		want  string
	}{
		{"count and label", false, [2]int{285, 285}, "76d57b70d92422e9c65b615f63d6836d7264e48790730aa9c0dbd8cbe2475599"},
		{"with probability", true, [2]int{885, 885}, "c8c1c2fdb606b232827861ce98b63fcfe315dba865ca9d15f35438d59b831715"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, r := katReport(t, tc.prob)
			s := f.s
			if got := [2]int{len(r.Shares[0]), len(r.Shares[1])}; got != tc.sizes || got != [2]int{s.ShareSize(0), s.ShareSize(1)} {
				t.Errorf("shares of %v bytes, ShareSize %d and %d, want %v", got, s.ShareSize(0), s.ShareSize(1), tc.sizes)
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

// katReport returns the known-answer tests' fixture, 8 bins (with the
// probability if prob) and both servers under the key {2}, and their
// report: bin 5, label 1, probability 3·2^30 where carried, drawn from
// ChaCha8 seeded {1}.
func katReport(t *testing.T, prob bool) (*fixture, Report) {
	t.Helper()
	s, err := New(8)
	if prob {
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
	if prob {
		r, err = s.EncodeProbability(5, true, 3<<30, rand.NewChaCha8([32]byte{1}))
	} else {
		r, err = s.Encode(5, true, rand.NewChaCha8([32]byte{1}))
	}
	if err != nil {
		t.Fatal(err)
	}
	return f, r
}
