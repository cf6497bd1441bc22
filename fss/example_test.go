package fss_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/fss"
)

// Three parties, in bins 0, 2 and 2 of a 4-bin ECDF, contribute a count
// and a label each; the two servers sum their shares of every prefix and
// only the sum of both shares is meaningful.
func Example() {
	dom, err := fss.NewPrefixDomain(4)
	if err != nil {
		panic(err)
	}
	parties := []struct {
		bin     int
		payload []uint64 // count, label
	}{{0, []uint64{1, 1}}, {2, []uint64{1, 0}}, {2, []uint64{1, 1}}}
	var server0, server1 []*fss.Key
	for _, p := range parties {
		k0, k1, err := dom.Gen(p.bin, p.payload, nil) // crypto/rand seeds
		if err != nil {
			panic(err)
		}
		server0, server1 = append(server0, k0), append(server1, k1)
	}
	prefixes := []int{0, 1, 2, 3}
	share0 := make([]uint64, len(prefixes)*2)
	share1 := make([]uint64, len(prefixes)*2)
	if err := dom.SumPrefixes(server0, prefixes, share0); err != nil {
		panic(err)
	}
	if err := dom.SumPrefixes(server1, prefixes, share1); err != nil {
		panic(err)
	}
	for r, j := range prefixes {
		fmt.Printf("bins ≤ %d: count %d, positives %d\n", j, share0[2*r]+share1[2*r], share0[2*r+1]+share1[2*r+1])
	}
	// Output:
	// bins ≤ 0: count 1, positives 1
	// bins ≤ 1: count 1, positives 1
	// bins ≤ 2: count 3, positives 2
	// bins ≤ 3: count 3, positives 2
}

// Gen shares β·1[x < α]; each server evaluates its key alone and only the
// sum of the two shares means anything.
func ExampleGen() {
	alpha, beta := uint64(10), []uint64{5, 7}
	k0, k1, err := fss.Gen(alpha, beta, 8, nil)
	if err != nil {
		panic(err)
	}
	for _, x := range []uint64{9, 10} {
		y0, _ := fss.Eval(k0, x)
		y1, _ := fss.Eval(k1, x)
		fmt.Printf("x = %d: %d %d\n", x, y0[0]+y1[0], y0[1]+y1[1])
	}
	enc, _ := k0.MarshalBinary()
	fmt.Println("key bytes:", len(enc), "=", fss.EncodedSize(8, 2))
	// Output:
	// x = 9: 5 7
	// x = 10: 0 0
	// key bytes: 294 = 294
}

// A party in bin 1 of a 4-bin grid with payload (count 1, label 1) over
// F_p: each server evaluates its field key over every prefix, keeping the
// key's own shares (as verifying a report needs), and the two shares add
// up mod p to the party's prefix vector.
func ExamplePrefixDomain_FieldPrefixes() {
	dom, err := fss.NewPrefixDomain(4)
	if err != nil {
		panic(err)
	}
	k0, k1, err := dom.GenField(1, []fss.Fp{1, 1}, nil)
	if err != nil {
		panic(err)
	}
	var shares [2][][]fss.Fp
	for s, k := range []*fss.FieldKey{k0, k1} {
		shares[s] = [][]fss.Fp{make([]fss.Fp, 4*2)}
		if err := dom.FieldPrefixes([]*fss.FieldKey{k}, shares[s]); err != nil {
			panic(err)
		}
	}
	for j := range 4 {
		fmt.Println("prefix", j, shares[0][0][2*j].Add(shares[1][0][2*j]), shares[0][0][2*j+1].Add(shares[1][0][2*j+1]))
	}
	// Output:
	// prefix 0 0 0
	// prefix 1 1 1
	// prefix 2 1 1
	// prefix 3 1 1
}
