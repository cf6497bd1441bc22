package fss

import "math/bits"

// Modulus is the prime p = 2^64 − 2^32 + 1 of the field F_p in which a
// FieldKey's payload lives: Prio3's Field64 (draft-irtf-cfrg-vdaf §6.1),
// also called Goldilocks. Its form makes reduction cheap: 2^64 ≡ 2^32 − 1
// and 2^96 ≡ −1 (mod p).
const Modulus uint64 = 0xffff_ffff_0000_0001

// Fp is an element of F_p in canonical form, an integer in [0, p). The
// methods are branch-free on the values.
type Fp uint64

// Add returns a + b mod p.
func (a Fp) Add(b Fp) Fp {
	s, carry := bits.Add64(uint64(a), uint64(b), 0)
	d, borrow := bits.Sub64(s, Modulus, 0)
	return Fp(pick(carry|(borrow^1), d, s))
}

// Sub returns a − b mod p.
func (a Fp) Sub(b Fp) Fp {
	d, borrow := bits.Sub64(uint64(a), uint64(b), 0)
	return Fp(d + Modulus&-borrow)
}

// Neg returns −a mod p.
func (a Fp) Neg() Fp { return Fp(0).Sub(a) }

// Mul returns a·b mod p.
func (a Fp) Mul(b Fp) Fp {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return reduce128(hi, lo)
}

// Valid reports whether a is canonical, below p.
func (a Fp) Valid() bool { return uint64(a) < Modulus }

// pick returns x when bit is 1 and y when it is 0.
func pick(bit, x, y uint64) uint64 {
	return y ^ (x^y)&-bit
}

// reduce128 returns (hi·2^64 + lo) mod p, for any 128-bit integer:
// with hi = h1·2^32 + h0, the value is lo − h1 + h0·(2^32 − 1) mod p.
func reduce128(hi, lo uint64) Fp {
	h1, h0 := hi>>32, hi&0xffff_ffff
	t, borrow := bits.Sub64(lo, h1, 0)
	t -= 0xffff_ffff & -borrow // + 2^64 ≡ 2^32 − 1 was wrapped in: take it out
	s, carry := bits.Add64(t, h0<<32-h0, 0)
	s += 0xffff_ffff & -carry // the 2^64 the carry lost
	d, borrow := bits.Sub64(s, Modulus, 0)
	return Fp(pick(borrow^1, d, s))
}

// AddLazy returns a word congruent to a + x mod p, for any word a: a sum
// of field elements carried lazily, one addition and a conditional
// 2^32 − 1 per term (addP), made canonical once at the end (Canonical).
func AddLazy(a uint64, x Fp) uint64 { return addP(a, uint64(x)) }

// Canonical returns the element of F_p congruent to the word v.
func Canonical(v uint64) Fp { return canonical(v) }
