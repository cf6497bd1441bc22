package mechanism

import (
	"runtime"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// sampler draws one integer noise from a cryptographic Source
// (noise.DiscreteLaplace, noise.DiscreteGaussian).
type sampler interface {
	Sample(src noise.Source) int64
}

// nodeStream is the Source of one node's noise: the stream
// noise.Seed.Stream(domain, node) of the release seed. It is a variable
// only so that tests can count the words a release reads.
var nodeStream = func(seed noise.Seed, domain uint32, node int) noise.Source {
	return seed.Stream(domain, uint64(node))
}

// drawNodes draws, when a release is created, the noise of all count
// nodes it can ever use: vals[j] is the noise of node(j), drawn by
// dist(node(j)) from that node's own stream. Each node's value depends
// only on the seed, the domain and the node, never on which other nodes
// are drawn or in what order, so large releases are drawn in parallel
// blocks.
func drawNodes(seed noise.Seed, domain uint32, count int, node func(j int) int, dist func(node int) sampler) []int64 {
	vals := make([]int64, count)
	draw := func(from, to int) {
		for j := from; j < to; j++ {
			v := node(j)
			vals[j] = dist(v).Sample(nodeStream(seed, domain, v))
		}
	}
	workers := min(runtime.GOMAXPROCS(0), count/minNodesPerWorker)
	if workers <= 1 {
		draw(0, count)
		return vals
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { draw(w*count/workers, (w+1)*count/workers) })
	}
	wg.Wait()
	return vals
}

// minNodesPerWorker is the least block of nodes worth a goroutine.
const minNodesPerWorker = 4096

// identity is the node numbering of mechanisms whose every node is used.
func identity(j int) int { return j }
