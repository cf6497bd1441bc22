package fss

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestFieldAgainstBigInt checks Add, Sub, Neg, Mul and reduce128 against
// math/big on random and edge operands.
func TestFieldAgainstBigInt(t *testing.T) {
	p := new(big.Int).SetUint64(Modulus)
	r := rand.New(testRand(80))
	edges := []uint64{0, 1, 2, 1<<32 - 1, 1 << 32, 1<<32 + 1, Modulus - 2, Modulus - 1}
	operand := func(i int) uint64 {
		if i < len(edges) {
			return edges[i]
		}
		return r.Uint64N(Modulus)
	}
	mod := func(x *big.Int) uint64 { return new(big.Int).Mod(x, p).Uint64() }
	for i := range 2000 {
		a, b := operand(i%40), operand(i/40%40+i/1600)
		A, B := new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)
		for name, tc := range map[string]struct{ got, want uint64 }{
			"add": {uint64(Fp(a).Add(Fp(b))), mod(new(big.Int).Add(A, B))},
			"sub": {uint64(Fp(a).Sub(Fp(b))), mod(new(big.Int).Sub(A, B))},
			"neg": {uint64(Fp(a).Neg()), mod(new(big.Int).Neg(A))},
			"mul": {uint64(Fp(a).Mul(Fp(b))), mod(new(big.Int).Mul(A, B))},
		} {
			if tc.got != tc.want {
				t.Fatalf("%s(%d, %d) = %d, want %d", name, a, b, tc.got, tc.want)
			}
		}
	}
	for i := range 2000 {
		hi, lo := r.Uint64(), r.Uint64()
		if i < 64 {
			hi, lo = ^uint64(0)>>(i%8*8), ^uint64(0)<<(i/8*8)
		}
		x := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
		x.Or(x, new(big.Int).SetUint64(lo))
		if got, want := uint64(reduce128(hi, lo)), mod(x); got != want {
			t.Fatalf("reduce128(%#x, %#x) = %d, want %d", hi, lo, got, want)
		}
	}
}

// TestAddLazyAgainstBigInt: a lazily carried sum (AddLazy) of edge and
// random elements, from any starting word, made canonical (Canonical),
// is the sum mod p; and Canonical of any word is that word mod p.
func TestAddLazyAgainstBigInt(t *testing.T) {
	p := new(big.Int).SetUint64(Modulus)
	r := rand.New(testRand(81))
	edges := []uint64{0, 1, 1<<32 - 1, 1 << 32, Modulus - 1, Modulus, Modulus + 1, 1<<64 - 1}
	for _, start := range edges {
		t.Run(fmt.Sprintf("start=%#x", start), func(t *testing.T) {
			if got, want := uint64(Canonical(start)), new(big.Int).Mod(new(big.Int).SetUint64(start), p).Uint64(); got != want {
				t.Fatalf("Canonical(%#x) = %d, want %d", start, got, want)
			}
			lazy, want := start, new(big.Int).SetUint64(start)
			for i := range 4000 {
				x := Modulus - 1 // the largest term, many times: the carries
				if i%2 == 1 {
					x = r.Uint64N(Modulus)
				}
				lazy = AddLazy(lazy, Fp(x))
				want.Add(want, new(big.Int).SetUint64(x))
				if got := uint64(Canonical(lazy)); got != new(big.Int).Mod(want, p).Uint64() {
					t.Fatalf("after %d terms: Canonical(AddLazy …) = %d, want %d", i+1, got, new(big.Int).Mod(want, p))
				}
			}
		})
	}
}

func ExampleFp() {
	minusOne := Fp(1).Neg()
	fmt.Println(uint64(minusOne) == Modulus-1, minusOne.Mul(minusOne), Fp(Modulus-1).Add(2))
	// Output: true 1 1
}
