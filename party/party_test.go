package party

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"golang.org/x/crypto/chacha20"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/payload"
)

func TestNewValidates(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 10)
	for _, tc := range []struct {
		inst Instance
		want string
	}{
		{Instance{Score: math.NaN()}, "NaN"},
		{Instance{Score: 1.5}, "1.5"},
		{Instance{Score: 0.5, Label: 2}, "label 2"},
		{Instance{Score: 0.5, Probability: -0.1, HasProbability: true}, "probability -0.1"},
		{Instance{Score: 0.5, Probability: math.NaN(), HasProbability: true}, "probability NaN"},
	} {
		if _, err := New(tc.inst, g); !errors.Is(err, ErrInvalidInstance) || !strings.HasPrefix(err.Error(), "party: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.inst, err, tc.want)
		}
	}
}

func TestPayloadAndShares(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 10)
	p, err := New(Instance{Score: 0.35, Label: 0, Probability: 0.25, HasProbability: true}, g)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := New(Instance{Score: 0.35}, g)
	if p.ReportID() == q.ReportID() || p.ReportID().IsZero() {
		t.Error("report IDs are not fresh")
	}
	if p.Bin() != 4 {
		t.Fatalf("bin %d, want 4", p.Bin())
	}
	want := map[payload.Component]uint64{payload.Count: 1, payload.Label: 0, payload.NotLabel: 1, payload.Probability: 1 << 30}
	for c, v := range want {
		if p.Payload(c) != v {
			t.Errorf("%v payload %d, want %d", c, p.Payload(c), v)
		}
	}
	prefixes := []int{3, 4, 10}
	leader, helper, err := p.AdditiveShares(payload.Probability, prefixes)
	if err != nil {
		t.Fatal(err)
	}
	for j, k := range p.kernel(payload.Probability, prefixes) {
		if leader[j]+helper[j] != k {
			t.Errorf("prefix %d: shares add to %d, want %d", prefixes[j], leader[j]+helper[j], k)
		}
	}
	if _, _, err := p.AdditiveShares(payload.Count, []int{11}); err == nil {
		t.Error("prefix beyond the grid accepted")
	}
}

// TestSharesFixedPerPrefix: the leader's share of (component, prefix) is
// the same in every call and whatever other prefixes are asked with it
// (so every batch carries the same shares), differs between components
// and parties, and is the keystream word the doc names.
func TestSharesFixedPerPrefix(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 100)
	p, _ := New(Instance{Score: 0.5, Label: 1}, g)
	q, _ := New(Instance{Score: 0.5, Label: 1}, g)
	all := make([]int, 100)
	for j := range all {
		all[j] = j + 1
	}
	full, _, _ := p.AdditiveShares(payload.Count, all)
	c := chacha20Words(t, p.seed, payload.Count, 100)
	for _, tc := range []struct {
		name     string
		prefixes []int
	}{
		{"one", []int{50}},
		{"sparse", []int{1, 9, 16, 17, 64, 100}},
		{"same block", []int{3, 4, 5}},
		{"all", all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leader, helper, _ := p.AdditiveShares(payload.Count, tc.prefixes)
			again, helperAgain, _ := p.AdditiveShares(payload.Count, tc.prefixes)
			label, _, _ := p.AdditiveShares(payload.Label, tc.prefixes)
			other, _, _ := q.AdditiveShares(payload.Count, tc.prefixes)
			for j, i := range tc.prefixes {
				switch {
				case leader[j] != full[i-1] || leader[j] != c[i-1]:
					t.Errorf("prefix %d: leader share %#x, want %#x (with all prefixes) and keystream word %#x", i, leader[j], full[i-1], c[i-1])
				case again[j] != leader[j] || helperAgain[j] != helper[j]:
					t.Errorf("prefix %d: a second call gave other shares", i)
				case label[j] == leader[j] || other[j] == leader[j]:
					t.Errorf("prefix %d: the same share for another component or party", i)
				}
			}
		})
	}
}

// chacha20Words returns the first n words of the ChaCha20 keystream under
// key with nonce (c, 0…), read straight through.
func chacha20Words(t *testing.T, key [32]byte, c payload.Component, n int) []uint64 {
	t.Helper()
	var nonce [chacha20.NonceSize]byte
	nonce[0] = byte(c)
	cipher, err := chacha20.NewUnauthenticatedCipher(key[:], nonce[:])
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8*n)
	cipher.XORKeyStream(buf, buf)
	words := make([]uint64, n)
	for j := range words {
		words[j] = binary.LittleEndian.Uint64(buf[8*j:])
	}
	return words
}
