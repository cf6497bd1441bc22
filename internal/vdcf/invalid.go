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
	// SeedLength cuts or lengthens one server's seed by 1 to SeedSize
	// bytes: a share of the wrong length.
	SeedLength
	// ExplicitOff adds δ ≠ 0 to one explicit share of a determined
	// value: explicit shares inconsistent with the seeds.
	ExplicitOff
	// CopiedSeed replaces one server's seed by that of another report
	// under the same nonce.
	CopiedSeed
	// OtherNonce is an honest report made under another nonce and sent
	// under this one: a report copied under a new report ID.
	OtherNonce
	// ProbTooLarge is probability 2^32 + 1 with its true 33-bit
	// decomposition: above the fixed point of 1.
	ProbTooLarge
	// ProbMinusOne is probability p − 1 (−1), decomposed as b_0 = p − 1.
	ProbMinusOne
	// ProbNotBits decomposes a probability v ≥ 2 as b_0 = v: digits that
	// add up but are not bits.
	ProbNotBits
	// ProbMismatch decomposes p + 1 while the keys carry p.
	ProbMismatch
	// ProbElsewhere adds δ to one correction word of the probability
	// component of both keys: probability at bins other than the record's.
	ProbElsewhere
	// ProbBrokenTriple makes the triple of p̂·x₁ inconsistent.
	ProbBrokenTriple
)

// Forgeries lists every Forgery of the scheme's reports with its name and
// the rejection it gets: the probability's only if the scheme carries it.
func (s *Scheme) Forgeries() []verify.Kind[Forgery] {
	var out []verify.Kind[Forgery]
	for _, k := range forgeries {
		if k.Kind < ProbTooLarge || s.prob {
			out = append(out, k)
		}
	}
	return out
}

// forgeries lists every Forgery, the probability's last.
var forgeries = []verify.Kind[Forgery]{
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
	{Kind: SeedLength, Name: "seed of the wrong length", Want: verify.ErrMalformed},
	{Kind: ExplicitOff, Name: "explicit share inconsistent with the seeds", Want: verify.ErrProof},
	{Kind: CopiedSeed, Name: "seed of another report", Want: verify.ErrProof},
	{Kind: OtherNonce, Name: "report made under another nonce", Want: verify.ErrProof},
	{Kind: ProbTooLarge, Name: "probability 2^32+1", Want: verify.ErrProof},
	{Kind: ProbMinusOne, Name: "probability p-1", Want: verify.ErrProof},
	{Kind: ProbNotBits, Name: "probability decomposed into non-bits", Want: verify.ErrProof},
	{Kind: ProbMismatch, Name: "probability decomposition not matching", Want: verify.ErrProof},
	{Kind: ProbElsewhere, Name: "probability at another bin", Want: verify.ErrProof},
	{Kind: ProbBrokenTriple, Name: "inconsistent probability triple", Want: verify.ErrProof},
}

// Forge returns an invalid report of kind k under nonce, from a record at
// bin with label; randomness comes from rnd (keys, seeds) and rng (which
// bin, word or length).
func (s *Scheme) Forge(k Forgery, nonce [NonceSize]byte, bin int, label bool, rnd io.Reader, rng *rand.Rand) (Report, error) {
	r, err := s.forge(k, nonce, bin, label, rnd, rng)
	if err != nil {
		return r, fmt.Errorf("vdcf: forgery %d: %w", k, err)
	}
	return r, nil
}

func (s *Scheme) forge(k Forgery, nonce [NonceSize]byte, bin int, label bool, rnd io.Reader, rng *rand.Rand) (Report, error) {
	if (k == NotOneHot || k == ProbElsewhere) && bin == 0 {
		bin = 1 // notOneHot needs α ≤ N − 1
	}
	if k >= ProbTooLarge && !s.prob {
		return Report{}, fmt.Errorf("the scheme's reports carry no probability")
	}
	if r, ok, err := s.forgePayload(k, nonce, bin, label, rnd, rng); ok {
		return r, err
	}
	if k == OtherNonce {
		other, err := readNonce(rnd)
		if err != nil {
			return Report{}, err
		}
		r, err := s.encode(other, s.honest(bin, label, rng), rnd)
		r.Nonce = nonce
		return r, err
	}
	r, err := s.encode(nonce, s.honest(bin, label, rng), rnd)
	if err != nil {
		return r, err
	}
	switch k {
	case NotOneHot:
		return s.notOneHot(r, rng.IntN(s.Components()), rng)
	case ProbElsewhere:
		return s.notOneHot(r, Probability, rng)
	case OtherHelperShare, CopiedRandomness, CopiedSeed:
		return s.mixed(k, r, rnd, rng)
	case BrokenTriple, ProbBrokenTriple, ExplicitOff:
		s.offExplicit(k, r, rng)
		return r, nil
	case SeedLength:
		id := rng.IntN(2)
		r.Shares[id] = s.resizeSeed(r.Shares[id], rng)
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

// mixed puts parts of another honest report under the same nonce into r:
// the helper's share (OtherHelperShare), both servers' seeds and explicit
// shares (CopiedRandomness), or one server's seed (CopiedSeed).
func (s *Scheme) mixed(k Forgery, r Report, rnd io.Reader, rng *rand.Rand) (Report, error) {
	o, err := s.encode(r.Nonce, s.honest(rng.IntN(s.bins), rng.IntN(2) == 1, rng), rnd)
	if err != nil {
		return r, err
	}
	at := s.keySize()
	switch k {
	case OtherHelperShare:
		r.Shares[1] = o.Shares[1]
	case CopiedRandomness:
		for id := range r.Shares {
			copy(r.Shares[id][at:], o.Shares[id][at:])
		}
	default:
		id := rng.IntN(2)
		copy(r.Shares[id][at:at+SeedSize], o.Shares[id][at:])
	}
	return r, nil
}

// offExplicit adds δ ≠ 0 to one explicit share of r: 1 to c₁'s
// (BrokenTriple) or c_p's (ProbBrokenTriple), a random δ to a random one
// (ExplicitOff).
func (s *Scheme) offExplicit(k Forgery, r Report, rng *rand.Rand) {
	i, delta := corrC1, fss.Fp(1)
	switch k {
	case ProbBrokenTriple:
		i = corrCP
	case ExplicitOff:
		d := s.determined()
		i, delta = d[rng.IntN(len(d))], fss.Fp(1+rng.Uint64N(fss.Modulus-1))
	}
	id, off := s.explicitAt(i)
	addElement(r.Shares[id], off, delta)
}

// resizeSeed cuts 1 to SeedSize bytes from the seed of a share, or
// inserts as many zero bytes before it.
func (s *Scheme) resizeSeed(share []byte, rng *rand.Rand) []byte {
	n, at := 1+rng.IntN(SeedSize), s.keySize()
	if rng.IntN(2) == 0 {
		return append(share[:at:at], share[at+n:]...)
	}
	return append(share[:at:at], append(make([]byte, n), share[at:]...)...)
}

// explicitAt returns the server that receives the explicit share of the
// determined value i and the share's offset in that server's share.
func (s *Scheme) explicitAt(i int) (id, off int) {
	for id, list := range s.explicit {
		for k, j := range list {
			if j == i {
				return id, s.keySize() + SeedSize + 8*k
			}
		}
	}
	panic(fmt.Sprintf("vdcf: correlated value %d is not determined", i))
}

// addElement adds delta to the field element at b[off:].
func addElement(b []byte, off int, delta fss.Fp) {
	w := fss.Fp(binary.LittleEndian.Uint64(b[off:]))
	binary.LittleEndian.PutUint64(b[off:], uint64(w.Add(delta)))
}

// forgePayload makes the forgeries whose payload or decomposition is not
// a record's; ok is false for the other kinds.
func (s *Scheme) forgePayload(k Forgery, nonce [NonceSize]byte, bin int, label bool, rnd io.Reader, rng *rand.Rand) (r Report, ok bool, err error) {
	p := fss.Fp(fss.Modulus)
	pl := s.honest(bin, label, rng)
	switch k {
	case CountTwo:
		pl.beta[0], pl.beta[1] = 2, 0
	case MinusOne:
		pl.beta[0], pl.beta[1] = p-1, 0
	case LabelTwo:
		pl.beta[1] = 2
	case BothLabels:
		pl.beta[0], pl.beta[1] = 2, 1
	case ProbTooLarge:
		pl.beta[2], pl.bits = MaxProbability+1, bitsOf(MaxProbability+1)
	case ProbMinusOne:
		pl.beta[2], pl.bits = p-1, make([]fss.Fp, probBits)
		pl.bits[0] = p - 1
	case ProbNotBits:
		v := 2 + rng.Uint64N(MaxProbability-1)
		pl.beta[2], pl.bits = fss.Fp(v), make([]fss.Fp, probBits)
		pl.bits[0] = fss.Fp(v)
	case ProbMismatch:
		v := rng.Uint64N(MaxProbability)
		pl.beta[2], pl.bits = fss.Fp(v), bitsOf(v+1)
	default:
		return r, false, nil
	}
	r, err = s.encode(nonce, pl, rnd)
	return r, true, err
}

// honest is the plaintext of an honest record at bin with label, and with
// a random probability if the scheme carries it.
func (s *Scheme) honest(bin int, label bool, rng *rand.Rand) plain {
	pl := plain{bin: bin, beta: []fss.Fp{1, labelValue(label)}}
	if s.prob {
		v := rng.Uint64N(MaxProbability + 1)
		pl.beta, pl.bits = append(pl.beta, fss.Fp(v)), bitsOf(v)
	}
	return pl
}

// notOneHot adds δ ≠ 0 to the same value correction word, of component
// comp, of both keys:
// their sum then changes by ±δ over a subtree on the path of α, which
// changes the first differences at more than one point or the total.
// The record's bin must be at least 1 (α ≤ N − 1 < 2^(n−1)), so that the
// subtree lies among the evaluated points.
func (s *Scheme) notOneHot(r Report, comp int, rng *rand.Rand) (Report, error) {
	level, m := rng.IntN(s.dom.Bits()), s.Components()
	off := 4 + 16 + level*(16+8*m) + 16 + 8*comp
	delta := fss.Fp(1 + rng.Uint64N(1000))
	for b := range r.Shares {
		addElement(r.Shares[b], off, delta)
	}
	return r, nil
}
