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

// The partitioned release over the 75 bins of a ROC grid, one class
// vector at ε = 1 under add/remove: the lowest and highest 13 bins get a
// one-level mechanism each, so the first prefix sums one node of scale
// 1/ε, where auto's one tree over the grid sums nodes of scale 2/ε; the
// middle and upper prefixes pay the lower parts' totals, so the mean
// prefix variance is larger.
func ExampleNew_partitioned() {
	p := mechanism.Params{Name: "partitioned", Bins: 75, Epsilon: 1, Relation: mechanism.AddRemove}
	parts, err := mechanism.New(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Name = "auto"
	auto, err := mechanism.New(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range []mechanism.Mechanism{parts, auto} {
		fmt.Printf("%-52s prefix 1: %5.2f, prefix 75: %6.2f, mean: %5.2f\n",
			m.Name(), m.PrefixVariance(1), m.PrefixVariance(75), m.MeanVariance())
	}
	// Output:
	// partitioned(13:kary(k=26),49:kary(k=10),13:kary(k=26)) prefix 1:  1.84, prefix 75:  94.89, mean: 58.00
	// kary(k=12)                                           prefix 1:  7.84, prefix 75:  70.52, mean: 47.64
}
