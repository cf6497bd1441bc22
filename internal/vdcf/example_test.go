package vdcf_test

import (
	"crypto/rand"
	"fmt"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// A party in bin 2 of 4 with label 1 uploads one report; both servers
// verify it and each keeps its share of the count and label prefix
// vectors (not-label is count − label), component by component
// (Scheme.Summed). A report whose two halves come
// from different parties is rejected.
func Example() {
	s, _ := vdcf.New(4)
	var key [vdcf.KeySize]byte
	rand.Read(key[:]) // shared by the two servers, secret from parties
	leader, _ := s.NewServer(0, key)
	helper, _ := s.NewServer(1, key)

	r, _ := s.Encode(2, true, rand.Reader)
	vecs, err := vdcf.VerifyPair(leader, helper, r)
	fmt.Println("honest report:", err)
	for j := range s.Bins() {
		at := func(c payload.Component) uint64 {
			k := int(c)*s.Bins() + j // Summed(): count, then label
			return uint64(vecs[0][k].Add(vecs[1][k]))
		}
		fmt.Printf("prefix %d: count %d, label %d, not-label %d\n", j, at(payload.Count), at(payload.Label), at(payload.Count)-at(payload.Label))
	}

	bad, _ := s.Encode(1, false, rand.Reader)
	bad.Shares[1] = r.Shares[1] // the helper's share of another report
	_, err = vdcf.VerifyPair(leader, helper, bad)
	fmt.Println("mixed report:", verify.Reason(err))
	// Output:
	// honest report: <nil>
	// prefix 0: count 0, label 0, not-label 0
	// prefix 1: count 0, label 0, not-label 0
	// prefix 2: count 1, label 1, not-label 0
	// prefix 3: count 1, label 1, not-label 0
	// mixed report: proof
}
