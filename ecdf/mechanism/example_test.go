package mechanism_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// The tree mechanism of dp-ecdf Eq. (2) over 1000 bins at ε = 1: every
// prefix count gets the sum of L + 1 = 11 discrete Laplace node noises
// of scale Δ/ε = 10 (the tight replace-one sensitivity Δ = L), and a
// release answers the same prefix with the same noise.
func ExampleNew_tree() {
	m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: 1000, Epsilon: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: N=%d L=%d ε=%g under %s neighbours\n",
		m.Name(), m.Bins(), len(m.Terms(1, nil))-1, m.Epsilon(), m.Relation())
	fmt.Printf("prefix variance %.1f counts² (continuous Laplace: 2(L+1)L²/ε² = %d)\n",
		m.PrefixVariance(1), 2*11*10*10)
	fmt.Println("terms of prefix 5:", len(m.Terms(5, nil)), "of", m.Nodes(), "nodes")

	var seed [32]byte // in production: noise.NewSeed()
	release := m.NewRelease(seed)
	first := release.PrefixNoise(500)
	fmt.Println("same noise on a repeated query:", release.PrefixNoise(500) == first)
	// Output:
	// tree: N=1000 L=10 ε=1 under replace neighbours
	// prefix variance 2198.2 counts² (continuous Laplace: 2(L+1)L²/ε² = 2200)
	// terms of prefix 5: 11 of 2001 nodes
	// same noise on a repeated query: true
}
