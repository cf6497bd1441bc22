package vdcf

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// Forgery is a kind of invalid report a malicious party can make on its
// own: a payload other than one record, a key pair that is not one
// comparison function, parts of two reports, or bytes that do not decode.
// Forge builds them for simulations (simulate --malicious) and tests;
// each is rejected at both servers, for the reason Forgeries gives.
type Forgery int

// The forgeries.
const (
	// CountTwo is payload (2, 0): count 2.
	CountTwo Forgery = iota
	// MinusOne is payload (p − 1, 0): count −1.
	MinusOne
	// LabelTwo is payload (1, 2): label 2.
	LabelTwo
	// BothLabels is payload (2, 1): label and 1 − label both set.
	BothLabels
	// NotOneHot adds the same δ to one value correction word of both
	// keys: a key pair whose prefix vector is not a step function.
	NotOneHot
	// OtherHelperShare pairs the leader's share with the helper's share
	// of another report.
	OtherHelperShare
	// CopiedRandomness replaces the correlated randomness of both shares
	// by another report's.
	CopiedRandomness
	// BrokenTriple makes the party's Beaver triple inconsistent
	// (c₁ ≠ a₁²).
	BrokenTriple
	// Truncated cuts the leader's share short.
	Truncated
	// Swapped sends each server the other's share.
	Swapped
)

// Forgeries lists every Forgery with its name and the rejection it gets.
func Forgeries() []verify.Kind[Forgery] {
	return []verify.Kind[Forgery]{
		{Kind: CountTwo, Name: "count 2", Want: verify.ErrProof},
		{Kind: MinusOne, Name: "count p-1", Want: verify.ErrProof},
		{Kind: LabelTwo, Name: "label 2", Want: verify.ErrProof},
		{Kind: BothLabels, Name: "label and 1-label both set", Want: verify.ErrProof},
		{Kind: NotOneHot, Name: "keys of no one-hot function", Want: verify.ErrProof},
		{Kind: OtherHelperShare, Name: "helper share of another report", Want: verify.ErrProof},
		{Kind: CopiedRandomness, Name: "correlated randomness of another report", Want: verify.ErrProof},
		{Kind: BrokenTriple, Name: "inconsistent triple", Want: verify.ErrProof},
		{Kind: Truncated, Name: "truncated share", Want: verify.ErrMalformed},
		{Kind: Swapped, Name: "shares swapped", Want: verify.ErrMismatch},
	}
}

// Forge returns an invalid report of kind k under nonce, from a record at
// bin with label; randomness comes from rnd (keys, shares) and rng (which
// bin, word or length).
func (s *Scheme) Forge(k Forgery, nonce [NonceSize]byte, bin int, label bool, rnd io.Reader, rng *rand.Rand) (Report, error) {
	r, err := s.forge(k, bin, label, rnd, rng)
	if err != nil {
		return r, fmt.Errorf("vdcf: forgery %d: %w", k, err)
	}
	r.Nonce = nonce
	return r, nil
}

func (s *Scheme) forge(k Forgery, bin int, label bool, rnd io.Reader, rng *rand.Rand) (Report, error) {
	p := fss.Fp(fss.Modulus)
	switch k {
	case CountTwo:
		return s.encode(bin, []fss.Fp{2, 0}, rnd)
	case MinusOne:
		return s.encode(bin, []fss.Fp{p - 1, 0}, rnd)
	case LabelTwo:
		return s.encode(bin, []fss.Fp{1, 2}, rnd)
	case BothLabels:
		return s.encode(bin, []fss.Fp{2, 1}, rnd)
	}
	if k == NotOneHot && bin == 0 {
		bin = 1 // notOneHot needs α ≤ N − 1
	}
	r, err := s.encode(bin, []fss.Fp{1, labelValue(label)}, rnd)
	if err != nil {
		return r, err
	}
	keyLen := s.ShareSize() - 8*corrLen
	switch k {
	case NotOneHot:
		return s.notOneHot(r, rng)
	case OtherHelperShare, CopiedRandomness:
		o, err := s.encode(rng.IntN(s.bins), []fss.Fp{1, labelValue(rng.IntN(2) == 1)}, rnd)
		if err != nil {
			return r, err
		}
		if k == OtherHelperShare {
			r.Shares[1] = o.Shares[1]
			return r, nil
		}
		for i := range r.Shares {
			copy(r.Shares[i][keyLen:], o.Shares[i][keyLen:])
		}
		return r, nil
	case BrokenTriple:
		off := keyLen + 8*corrC1
		c := fss.Fp(binary.LittleEndian.Uint64(r.Shares[0][off:]))
		binary.LittleEndian.PutUint64(r.Shares[0][off:], uint64(c.Add(1)))
		return r, nil
	case Truncated:
		r.Shares[0] = r.Shares[0][:1+rng.IntN(len(r.Shares[0])-1)] // not empty: an upload
		return r, nil
	case Swapped:
		r.Shares[0], r.Shares[1] = r.Shares[1], r.Shares[0]
		return r, nil
	}
	return r, fmt.Errorf("unknown kind")
}

// notOneHot adds δ ≠ 0 to the same value correction word of both keys:
// their sum then changes by ±δ over a subtree on the path of α, which
// changes the first differences at more than one point or the total.
// The record's bin must be at least 1 (α ≤ N − 1 < 2^(n−1)), so that the
// subtree lies among the evaluated points.
func (s *Scheme) notOneHot(r Report, rng *rand.Rand) (Report, error) {
	level, comp := rng.IntN(s.dom.Bits()), rng.IntN(Components)
	off := 4 + 16 + level*(16+8*Components) + 16 + 8*comp
	delta := fss.Fp(1 + rng.Uint64N(1000))
	for b := range r.Shares {
		w := fss.Fp(binary.LittleEndian.Uint64(r.Shares[b][off:]))
		binary.LittleEndian.PutUint64(r.Shares[b][off:], uint64(w.Add(delta)))
	}
	return r, nil
}
