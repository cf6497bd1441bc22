package noise

import (
	"fmt"
	"testing"
)

// TestStreamFillMatchesUint64: Fill gives the words that as many calls of
// Uint64 give, from any position of the stream, and the stream goes on
// from the same place after it.
func TestStreamFillMatchesUint64(t *testing.T) {
	var seed Seed
	seed[0] = 9
	for _, before := range []int{0, 1, 7, 8, 9} {
		for _, n := range []int{0, 1, 7, 8, 9, 64, 513} {
			t.Run(fmt.Sprintf("after %d words, %d words", before, n), func(t *testing.T) {
				want, got := seed.Stream(3, 4), seed.Stream(3, 4)
				for range before {
					want.Uint64()
					got.Uint64()
				}
				words := make([]uint64, n)
				got.Fill(words)
				for i, w := range words {
					if x := want.Uint64(); w != x {
						t.Fatalf("word %d: %#x, want %#x", i, w, x)
					}
				}
				for i := range 10 {
					if x, y := got.Uint64(), want.Uint64(); x != y {
						t.Fatalf("word %d after Fill: %#x, want %#x", i, x, y)
					}
				}
			})
		}
	}
}
