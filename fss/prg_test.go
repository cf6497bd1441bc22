package fss

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPRGNodeMatchesStandardLibrary checks prgNode (accelerated when the
// platform allows, with each accelerated loop the platform has: see
// accelerations) against crypto/aes for seed counts around the 8- and
// 16-seed groups, every combination of outputs the evaluators use, and
// the first and last fixed keys.
func TestPRGNodeMatchesStandardLibrary(t *testing.T) {
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			checkPRGNode(t)
		})
	}
}

// accel is one loop of the PRG: use switches to it and returns the
// function that switches back.
type accel struct {
	name string
	use  func() (restore func())
}

func checkPRGNode(t *testing.T) {
	r := rand.New(testRand(40))
	for _, m := range []int{1, 2, 3, maxComponents} {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 32, 33, 64} {
			for _, tc := range []struct {
				left, right   bool
				first, values int
			}{{true, true, 0, m}, {true, false, 0, (m + 1) / 2}, {false, true, m / 2, (m + 1) / 2}, {false, false, 0, (m + 1) / 2}, {true, false, 0, 0}} {
				seeds := make([]block, n)
				for i := range seeds {
					seeds[i] = block{r.Uint64(), r.Uint64()}
				}
				start := block{r.Uint64(), r.Uint64()}
				outs := func() (left, right, sums []block) {
					if tc.left {
						left = make([]block, n)
					}
					if tc.right {
						right = make([]block, n)
					}
					sums = make([]block, tc.values)
					for j := range sums {
						sums[j] = start
					}
					return left, right, sums
				}
				gl, gr, gs := outs()
				wl, wr, ws := outs()
				prgNode(m, seeds, gl, gr, tc.first, gs)
				prgNodePortable(m, seeds, wl, wr, tc.first, ws)
				if !slices.Equal(gl, wl) || !slices.Equal(gr, wr) || !slices.Equal(gs, ws) {
					t.Fatalf("m=%d, %d seeds, %+v: prgNode differs from crypto/aes", m, n, tc)
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

// TestHashNodeMatchesStandardLibrary checks the field walker's PRG
// (hashNode, which stores each seed's value blocks at a stride), with
// each accelerated loop, against crypto/aes for seed counts around the
// 8-, 16- and 32-seed groups of AES-NI, VAES on YMM and on ZMM registers.
func TestHashNodeMatchesStandardLibrary(t *testing.T) {
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			r := rand.New(testRand(42))
			buf := new([16]byte)
			for _, m := range []int{1, 4, maxFieldComponents} {
				for _, n := range []int{1, 8, 15, 16, 31, 32, 33, 47, 48, 63, 64, 65, 96} {
					seeds := make([]block, n)
					for i := range seeds {
						seeds[i] = block{r.Uint64(), r.Uint64()}
					}
					stride := n + 3
					left, right, vals := make([]block, n), make([]block, n), make([]block, m*stride)
					hashNode(m, seeds, left, right, m, vals, stride)
					for i, s := range seeds {
						if left[i] != hashPortable(0, s, buf) || right[i] != hashPortable(rightSeedKey(m), s, buf) {
							t.Fatalf("m=%d, %d seeds: child seeds of seed %d differ from crypto/aes", m, n, i)
						}
						for j := range m {
							if vals[j*stride+i] != hashPortable(1+j, s, buf) {
								t.Fatalf("m=%d, %d seeds: value block %d of seed %d differs from crypto/aes", m, n, j, i)
							}
						}
					}
				}
			}
		})
	}
}
