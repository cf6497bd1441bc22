package verify_test

import (
	crand "crypto/rand"
	"fmt"

	"github.com/fedecdf/fedecdf/internal/verify"
)

// Three parties upload once; the servers verify each report, aggregate the
// accepted ones and form the prefix vectors; a forged report is rejected.
func Example() {
	s, _ := verify.New(4)
	var key [verify.KeySize]byte
	crand.Read(key[:])
	leader, _ := s.NewServer(0, key)
	helper, _ := s.NewServer(1, key)
	agg := [2]*verify.Aggregate{s.NewAggregate(), s.NewAggregate()}

	records := []struct {
		bin   int
		label bool
	}{{0, true}, {2, false}, {2, true}}
	var reports []verify.Report
	for _, rec := range records {
		r, _ := s.Encode(rec.bin, rec.label, crand.Reader)
		reports = append(reports, r)
	}
	forged := reports[0]
	forged.Shares[1] = reports[1].Shares[1] // the helper's share of another report
	reports = append(reports, forged)

	for _, r := range reports {
		outs, err := verify.VerifyPair(leader, helper, r)
		if err != nil {
			fmt.Println("rejected:", verify.Reason(err))
			continue
		}
		agg[0].Add(r.Nonce, outs[0])
		agg[1].Add(r.Nonce, outs[1])
	}
	a, _ := agg[0].Prefixes()
	b, _ := agg[1].Prefixes()
	count, _ := verify.Reveal(a.Count, b.Count)
	label, _ := verify.Reveal(a.Label, b.Label)
	fmt.Println("count:", count)
	fmt.Println("label:", label)
	// Output:
	// rejected: mismatch
	// count: [1 1 3 3]
	// label: [1 1 2 2]
}
