package fss

import (
	crand "crypto/rand"
	"math/rand/v2"
	"testing"
)

// testRand returns a deterministic byte source for reproducible keys.
func testRand(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(s)
}

// reference is the brute-force comparison function β·1[x < α].
func reference(alpha uint64, beta []uint64, x uint64) []uint64 {
	out := make([]uint64, len(beta))
	if x < alpha {
		copy(out, beta)
	}
	return out
}

// checkPoint fails t unless the two shares at x add up to f_{α,β}(x).
func checkPoint(t *testing.T, k0, k1 *Key, alpha uint64, beta []uint64, x uint64) {
	t.Helper()
	y0, err := Eval(k0, x)
	if err != nil {
		t.Fatal(err)
	}
	y1, err := Eval(k1, x)
	if err != nil {
		t.Fatal(err)
	}
	want := reference(alpha, beta, x)
	for c := range want {
		if y0[c]+y1[c] != want[c] {
			t.Fatalf("n=%d α=%d m=%d x=%d component %d: shares add to %d, want %d",
				k0.Bits(), alpha, len(beta), x, c, y0[c]+y1[c], want[c])
		}
	}
}

func randomBeta(r *rand.Rand, m int) []uint64 {
	beta := make([]uint64, m)
	for c := range beta {
		beta[c] = r.Uint64()
	}
	return beta
}

func TestEvalExhaustiveSmallDomains(t *testing.T) {
	r := rand.New(testRand(1))
	for n := 1; n <= 10; n++ {
		for _, m := range []int{1, 3} {
			for trial := 0; trial < 2; trial++ {
				alpha := r.Uint64N(1 << n)
				beta := randomBeta(r, m)
				k0, k1, err := Gen(alpha, beta, n, testRand(r.Uint64()))
				if err != nil {
					t.Fatal(err)
				}
				for x := uint64(0); x < 1<<n; x++ {
					checkPoint(t, k0, k1, alpha, beta, x)
				}
			}
		}
	}
}

func TestEvalEdgeCases(t *testing.T) {
	r := rand.New(testRand(2))
	for _, n := range []int{1, 2, 5, 16, 32, 63, 64} {
		top := ^uint64(0) >> uint(64-n)
		for _, alpha := range []uint64{0, 1, top} {
			for _, m := range []int{1, 2, 3, 4} {
				beta := randomBeta(r, m)
				k0, k1, err := Gen(alpha, beta, n, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range []uint64{0, alpha - 1, alpha, alpha + 1, top, top - 1} {
					if inDomain(x, n) {
						checkPoint(t, k0, k1, alpha, beta, x)
					}
				}
			}
		}
	}
}

func TestEvalRandomPoints32(t *testing.T) {
	r := rand.New(testRand(3))
	for trial := 0; trial < 20; trial++ {
		alpha := r.Uint64N(1 << 32)
		beta := randomBeta(r, 3)
		k0, k1, err := Gen(alpha, beta, 32, crand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 50; i++ {
			x := r.Uint64N(1 << 32)
			if i%5 == 0 { // near α, where the paths share long prefixes
				x = (alpha + uint64(i/5) - 5) & (1<<32 - 1)
			}
			checkPoint(t, k0, k1, alpha, beta, x)
		}
	}
}
