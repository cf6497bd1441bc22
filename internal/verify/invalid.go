package verify

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"
)

// Forgery is a kind of invalid report a malicious party can make: an
// honest report altered so that it encodes something other than one
// record, or assembled from parts of two reports. Forge builds them for
// simulations (simulate --malicious) and tests; each is rejected at both
// servers, for the reason Forgeries gives.
type Forgery int

// The forgeries.
const (
	// SecondBin adds 1 at a second bucket: two bins, or label and
	// 1 − label both set.
	SecondBin Forgery = iota
	// CountTwo adds 1 at the record's bucket: count 2.
	CountTwo
	// MinusOne sets the record's bucket to p − 1 (count −1).
	MinusOne
	// OtherHelperShare pairs the leader's share with the helper's share
	// of another report.
	OtherHelperShare
	// CopiedProof replaces the proof by another report's.
	CopiedProof
	// RandomProof replaces the proof by random field elements.
	RandomProof
	// Truncated cuts the leader's input share short.
	Truncated
	numForgeries
)

// Kind is one kind K of invalid report of a verified scheme (Forgery
// here, vdcf.Forgery), with its name and the rejection it gets.
type Kind[K any] struct {
	Kind K
	Name string
	Want error
}

// Forgeries lists every Forgery with its name and the rejection it gets.
func Forgeries() []Kind[Forgery] {
	return []Kind[Forgery]{
		{SecondBin, "second bin", ErrMismatch},
		{CountTwo, "count 2", ErrMismatch},
		{MinusOne, "count p-1", ErrMismatch},
		{OtherHelperShare, "helper share of another report", ErrMismatch},
		{CopiedProof, "proof of another report", ErrProof},
		{RandomProof, "random proof", ErrProof},
		{Truncated, "truncated share", ErrMalformed},
	}
}

// Forge returns an invalid report of kind k under nonce, altered from an
// honest report of (bin, label); randomness comes from rnd (sharding)
// and rng (which bucket, which bytes).
func (s *Scheme) Forge(k Forgery, nonce [NonceSize]byte, bin int, label bool, rnd io.Reader, rng *rand.Rand) (Report, error) {
	r, err := s.EncodeAt(nonce, bin, label, rnd)
	if err != nil {
		return r, err
	}
	bucket := bin
	if label {
		bucket += s.bins
	}
	switch k {
	case SecondBin:
		other := rng.IntN(2*s.bins - 1)
		if other >= bucket {
			other++
		}
		return s.addAt(r, map[int]int64{other: 1})
	case CountTwo:
		return s.addAt(r, map[int]int64{bucket: 1})
	case MinusOne:
		return s.addAt(r, map[int]int64{bucket: -2})
	case OtherHelperShare, CopiedProof:
		o, err := s.Encode(rng.IntN(s.bins), rng.IntN(2) == 1, rnd)
		if err != nil {
			return r, err
		}
		if k == OtherHelperShare {
			r.Shares[1] = o.Shares[1]
			return r, nil
		}
		return s.withProof(r, func(fp128.Vec) (fp128.Vec, error) {
			_, proof, _, err := s.splitLeader(o.Shares[0])
			return proof, err
		})
	case RandomProof:
		return s.withProof(r, func(proof fp128.Vec) (fp128.Vec, error) {
			for i := range proof {
				if err := proof[i].SetUint64(rng.Uint64()); err != nil {
					return nil, err
				}
			}
			return proof, nil
		})
	case Truncated:
		r.Shares[0] = r.Shares[0][:rng.IntN(len(r.Shares[0]))]
		return r, nil
	}
	return r, fmt.Errorf("verify: unknown forgery %d", k)
}

// splitLeader splits the leader's input share into its measurement share,
// proof share and blind.
func (s *Scheme) splitLeader(share []byte) (meas, proof fp128.Vec, blind []byte, err error) {
	params := s.h.Params()
	m, p := int(params.MeasurementLength()), int(params.ProofLength())
	if len(share) != (m+p)*int(fp128.Size)+32 {
		return nil, nil, nil, fmt.Errorf("verify: leader share is %d bytes, want %d", len(share), (m+p)*int(fp128.Size)+32)
	}
	meas, proof = make(fp128.Vec, m), make(fp128.Vec, p)
	if err := meas.UnmarshalBinary(share[:m*int(fp128.Size)]); err != nil {
		return nil, nil, nil, err
	}
	if err := proof.UnmarshalBinary(share[m*int(fp128.Size) : (m+p)*int(fp128.Size)]); err != nil {
		return nil, nil, nil, err
	}
	return meas, proof, share[(m+p)*int(fp128.Size):], nil
}

// joinLeader is the inverse of splitLeader.
func joinLeader(meas, proof fp128.Vec, blind []byte) ([]byte, error) {
	a, err := meas.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b, err := proof.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return slices.Concat(a, b, blind), nil
}

// addAt returns r with delta added to the leader's share of the given
// buckets: the sum of the shares then encodes the altered histogram.
func (s *Scheme) addAt(r Report, delta map[int]int64) (Report, error) {
	meas, proof, blind, err := s.splitLeader(r.Shares[0])
	if err != nil {
		return r, err
	}
	for b, d := range delta {
		e := Lift(d)
		meas[b].AddAssign(&e)
	}
	r.Shares[0], err = joinLeader(meas, proof, blind)
	return r, err
}

// withProof returns r with its leader's proof share replaced by
// change(proof).
func (s *Scheme) withProof(r Report, change func(fp128.Vec) (fp128.Vec, error)) (Report, error) {
	meas, proof, blind, err := s.splitLeader(r.Shares[0])
	if err == nil {
		proof, err = change(proof)
	}
	if err == nil {
		r.Shares[0], err = joinLeader(meas, proof, blind)
	}
	return r, err
}

// RejectedText is rejected reports per reason (Reason), as {reason: n, …}
// in the order of the reasons' names ({} when none): how simulate and
// fedecdf status print them.
func RejectedText(rejected map[string]int) string {
	parts := make([]string, 0, len(rejected))
	for _, reason := range slices.Sorted(maps.Keys(rejected)) {
		parts = append(parts, fmt.Sprintf("%s: %d", reason, rejected[reason]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
