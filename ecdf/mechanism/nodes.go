package mechanism

import "github.com/fedecdf/fedecdf/ecdf/noise"

// sampler draws one integer noise from a cryptographic Source
// (noise.DiscreteLaplace, noise.DiscreteGaussian).
type sampler interface {
	Sample(src noise.Source) int64
}

// nodeNoises is the secret noise of one release, one variable per node:
// each is drawn on first use from its own stream of the release seed,
// noise.Seed.Stream(domain, node), and cached, so memory grows with the
// nodes queried, not with N, and a node always has the same value. The
// caller serialises access.
type nodeNoises struct {
	seed   noise.Seed
	domain uint32
	vals   map[int]int64
}

func newNodeNoises(seed noise.Seed, domain uint32) nodeNoises {
	return nodeNoises{seed: seed, domain: domain, vals: make(map[int]int64)}
}

// get returns the noise of node, drawn from dist on first use.
func (n *nodeNoises) get(node int, dist sampler) int64 {
	v, ok := n.vals[node]
	if !ok {
		v = dist.Sample(n.seed.Stream(n.domain, uint64(node)))
		n.vals[node] = v
	}
	return v
}
