package fss

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMMOMatchesStandardLibrary checks the accelerated MMO path (when the
// platform has one) against the portable path on crypto/aes, for every
// fixed key and batch lengths that exercise the 8-block and 1-block loops.
func TestMMOMatchesStandardLibrary(t *testing.T) {
	r := rand.New(testRand(40))
	for k := 0; k < prgKeys; k++ {
		for _, n := range []int{1, 7, 8, 9, 17} {
			src := make([]uint64, 2*n)
			for i := range src {
				src[i] = r.Uint64()
			}
			got, want := make([]uint64, 2*n), make([]uint64, 2*n)
			mmo(k, got, src)
			prgExpandPortable(k, 1, want, src, 2, n)
			if !slices.Equal(got, want) {
				t.Fatalf("key %d, %d blocks: accelerated MMO differs from crypto/aes", k, n)
			}
			inPlace := slices.Clone(src)
			mmo(k, inPlace, inPlace)
			if !slices.Equal(inPlace, want) {
				t.Fatalf("key %d, %d blocks: in-place MMO differs", k, n)
			}
		}
	}
}

// TestPRGExpandMatchesStandardLibrary checks the multi-key, strided
// expansion against the portable path for seed counts around the 8-seed
// groups, strides and key runs the batch evaluator uses.
func TestPRGExpandMatchesStandardLibrary(t *testing.T) {
	r := rand.New(testRand(42))
	for _, n := range []int{1, 5, 8, 13, 32} {
		for _, stride := range []int{2, 6} {
			for _, keys := range [][2]int{{0, 1}, {0, 5}, {2, 3}, {prgKeys - 4, 4}} {
				src := make([]uint64, n*stride)
				for i := range src {
					src[i] = r.Uint64()
				}
				got := make([]uint64, 2*n*keys[1])
				want := make([]uint64, 2*n*keys[1])
				prgExpand(keys[0], keys[1], got, src, stride, n)
				prgExpandPortable(keys[0], keys[1], want, src, stride, n)
				if !slices.Equal(got, want) {
					t.Fatalf("%d seeds, stride %d, keys %v: accelerated expansion differs from crypto/aes", n, stride, keys)
				}
			}
		}
	}
}

func TestSigmaIsOrthomorphism(t *testing.T) {
	// σ and x ↦ σ(x) ⊕ x must both be permutations (GKWY20 Def. 4); on
	// 64-bit halves σ(x) ⊕ x = (lo ⊕ hi, lo), invertible.
	r := rand.New(testRand(41))
	for range 1000 {
		x := block{r.Uint64(), r.Uint64()}
		s := sigma(x)
		if back := (block{s[1] ^ s[0], s[0]}); back != x {
			t.Fatalf("σ not inverted at %x", x)
		}
		d := block{s[0] ^ x[0], s[1] ^ x[1]}
		if back := (block{d[1], d[0] ^ d[1]}); back != x {
			t.Fatalf("σ ⊕ id not inverted at %x", x)
		}
	}
}
