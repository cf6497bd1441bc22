package vdcf

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
)

// TestSquaresMatchMul checks squares, on every path, against Fp.Mul on
// the limb and carry edges (0, 1, 2^32 ± 1, 2^63, p − 1, …) and uniform
// elements, on lengths that leave a tail after the kernel's groups of 8.
func TestSquaresMatchMul(t *testing.T) {
	edges := append([]fss.Fp{1<<32 - 1, 1 << 32, 1<<32 + 1, 1<<33 - 1, 1 << 63, 1<<64 - 1<<32, fss.Fp(fss.Modulus - 1<<32)}, limbEdges...)
	r := rand.New(rand.NewChaCha8([32]byte{52}))
	for _, accel := range accelPaths(t) {
		for _, n := range []int{0, 1, 7, 8, 9, 128, 1031} {
			t.Run(fmt.Sprintf("%s/n=%d", accel.name, n), func(t *testing.T) {
				accel.set(t)
				src, dst := make([]fss.Fp, n), make([]fss.Fp, n)
				for i := range src {
					if i%2 == 0 {
						src[i] = edges[r.IntN(len(edges))]
					} else {
						src[i] = fss.Fp(r.Uint64N(fss.Modulus))
					}
				}
				squares(dst, src)
				for i, x := range src {
					if want := x.Mul(x); dst[i] != want {
						t.Fatalf("%d² = %d, want %d", x, dst[i], want)
					}
				}
			})
		}
	}
}
