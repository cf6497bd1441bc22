package ecdf

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// uniformMechanism is a test mechanism that adds to each prefix i an
// independent integer noise uniform on [−a, a], derived from the release
// seed. It is not differentially private; it lets the tests of this
// package check exactly how a release's noise enters F̂, and compare
// Monte-Carlo variances with the closed form a(a+1)/3.
type uniformMechanism struct {
	bins     int
	a        int64
	relation mechanism.Relation
}

func (m uniformMechanism) Name() string                 { return fmt.Sprintf("uniform(a=%d)", m.a) }
func (m uniformMechanism) Bins() int                    { return m.bins }
func (m uniformMechanism) Epsilon() float64             { return 1 }
func (m uniformMechanism) Delta() float64               { return 0 }
func (m uniformMechanism) Relation() mechanism.Relation { return m.relation }
func (m uniformMechanism) PrefixVariance(int) float64   { return m.NodeVariance() }
func (m uniformMechanism) MeanVariance() float64        { return m.NodeVariance() }
func (m uniformMechanism) Nodes() int                   { return m.bins }
func (m uniformMechanism) NodeVariance() float64        { return float64(m.a*(m.a+1)) / 3 }

func (m uniformMechanism) Terms(i int, dst []mechanism.Term) []mechanism.Term {
	return append(dst, mechanism.Term{Node: i - 1, Coef: 1})
}

func (m uniformMechanism) NewRelease(seed [32]byte) mechanism.Release {
	return uniformRelease{seed: seed, a: m.a}
}

type uniformRelease struct {
	seed noise.Seed
	a    int64
}

func (r uniformRelease) PrefixNoise(i int) int64 {
	// Modulo bias is 2^-50 at most for the small a used here.
	return int64(r.seed.Stream(0, uint64(i)).Uint64()%uint64(2*r.a+1)) - r.a
}
