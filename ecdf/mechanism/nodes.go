package mechanism

import (
	"runtime"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// sampler draws one integer noise from a cryptographic Source
// (noise.DiscreteLaplace, noise.DiscreteGaussian), with fixed work at
// release creation (noise.SampleFixed).
type sampler = noise.FixedWorkSampler

// nodeStream is the Source of one node's noise: the stream
// noise.Seed.Stream(domain, node) of the release seed. It is a variable
// only so that tests can count the words a release reads.
var nodeStream = func(seed noise.Seed, domain uint32, node int) noise.Source {
	return seed.Stream(domain, uint64(node))
}

// SimulatedRelease returns the release of m under seed, the same noise
// as m.NewRelease(seed), drawn without the fixed work of creation
// ("Fixed work at release creation" below): for simulations of the
// noise's distribution (package analysis's Monte Carlo), whose time
// reveals nothing secret, never for a server's secret release.
func SimulatedRelease(m Mechanism, seed [32]byte) Release { return newRelease(m, seed, false) }

// releaser is a mechanism whose release can be drawn with or without the
// fixed work of creation.
type releaser interface {
	release(seed [32]byte, fixed bool) Release
}

// newRelease is m's release under seed, with fixed work if fixed.
func newRelease(m Mechanism, seed [32]byte, fixed bool) Release {
	if r, ok := m.(releaser); ok {
		return r.release(seed, fixed)
	}
	return m.NewRelease(seed)
}

// drawNodes draws, when a release is created, the noise of all count
// nodes it can ever use: vals[j] is the noise of node(j), drawn by
// dist(node(j)) from that node's own stream, with fixed work if fixed.
// Each node's value depends only on the seed, the domain and the node,
// never on which other nodes are drawn or in what order, so large
// releases are drawn in parallel blocks.
func drawNodes(seed noise.Seed, domain uint32, count int, node func(j int) int, dist func(node int) sampler, fixed bool) []int64 {
	vals := make([]int64, count)
	draw := func(from, to int) {
		for j := from; j < to; j++ {
			v := node(j)
			if fixed {
				vals[j] = noise.SampleFixed(dist(v), nodeStream(seed, domain, v))
			} else {
				vals[j] = dist(v).Sample(nodeStream(seed, domain, v))
			}
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

// Fixed work at release creation. The samplers are rejection loops: the
// words a draw reads, hence its time, grow with |η|/scale (issue 31: a
// one-node release took 340 ns at η = 0 and 629 ns at |η| ≥ 6). Each
// node's draw therefore computes a fixed budget of words of its stream
// at once (noise.SampleFixed: whole ChaCha20 blocks, the budget a
// function of the public scale), and its sampler reads them from memory;
// only a draw that needs more reads on from the stream, and takes
// longer, with probability at most 2^−40 at every scale — a bound
// derived from the samplers' rejection structure (package noise, "Fixed
// work"), not estimated. The noise is unchanged, value for value (the
// sampler reads the same words in the same order), so the distribution
// stays exact and the stability contract of package noise holds. What
// still varies with the noise is the sampler's own arithmetic on the
// words it uses, against the budget's keystream (TestDrawReadsFixedWords).
