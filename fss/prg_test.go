package fss

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPRGExpandMatchesStandardLibrary checks the accelerated expansion
// (when the platform has one) against the portable path on crypto/aes, for
// every fixed key, seed counts around the 8-seed groups and the key runs
// the evaluators use, and in place.
func TestPRGExpandMatchesStandardLibrary(t *testing.T) {
	r := rand.New(testRand(40))
	for first := 0; first < prgKeys; first++ {
		for _, nk := range []int{1, 3, 5} {
			if first+nk > prgKeys {
				continue
			}
			for _, n := range []int{1, 7, 8, 9, 17, 32} {
				src := make([]block, n)
				for i := range src {
					src[i] = block{r.Uint64(), r.Uint64()}
				}
				got, want := make([]block, n*nk), make([]block, n*nk)
				prgExpand(first, nk, got, src)
				prgExpandPortable(first, nk, want, src)
				if !slices.Equal(got, want) {
					t.Fatalf("keys %d…%d, %d seeds: accelerated expansion differs from crypto/aes", first, first+nk-1, n)
				}
				if nk == 1 {
					prgExpand(first, 1, src, src)
					if !slices.Equal(src, want) {
						t.Fatalf("key %d, %d seeds: in-place expansion differs", first, n)
					}
				}
			}
		}
	}
}

// TestPRGSumMatchesExpansion checks the summing path against the sum of
// the portable expansion's outputs.
func TestPRGSumMatchesExpansion(t *testing.T) {
	r := rand.New(testRand(43))
	for _, n := range []int{1, 7, 8, 9, 31, 32} {
		for _, keys := range [][2]int{{1, 1}, {1, 3}, {4, 2}} {
			src := make([]block, n)
			for i := range src {
				src[i] = block{r.Uint64(), r.Uint64()}
			}
			start := block{r.Uint64(), r.Uint64()}
			want := make([]block, keys[1])
			out := make([]block, n*keys[1])
			prgExpandPortable(keys[0], keys[1], out, src)
			for j := range want {
				want[j] = start
				for i := 0; i < n; i++ {
					want[j][0] += out[j*n+i][0]
					want[j][1] += out[j*n+i][1]
				}
			}
			got := make([]block, keys[1])
			for j := range got {
				got[j] = start
			}
			prgSum(keys[0], got, src)
			if !slices.Equal(got, want) {
				t.Fatalf("%d seeds, keys %v: sums differ", n, keys)
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
