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
		words := make([]uint64, gaussianWords)
		for j := from; j < to; j++ {
			v := node(j)
			if fixed {
				vals[j] = drawPadded(dist(v), nodeStream(seed, domain, v), words)
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
// node's draw therefore computes exactly wordBudget words of its stream
// at once (noise.Stream.Fill, whole ChaCha20 blocks), and its sampler
// reads them from memory; only a draw that needs more reads on from the
// stream, and takes longer. The noise is unchanged, value for value (the
// sampler reads the same words in the same order), so the distribution
// stays exact and the stability contract of package noise holds. The
// probability of reading on, estimated from 10^6 draws per scale (the
// tail of the words read falls by ≥ 5.5 bits per 16 words for the
// discrete Laplace at scales ≥ 1, ≥ 2.5 at finer ones, and by ≥ 1.3
// bits per 16 words for the discrete Gaussian at σ ≥ 1, ≥ 1 down to
// σ = 1/4), is below 2^-40 for the Laplace budget at scales ≥ 1 (2^-20
// at the finest, where ε ≫ Δ) and for the Gaussian one at σ ≥ 1 (2^-30
// at σ = 1/4) (EXPERIMENTS.md, "Per-report challenges, two checks,
// fixed-work noise"); it is an estimate, not a derived bound. What still
// varies with the noise is the
// sampler's own arithmetic on the words it uses, a few nanoseconds per
// word, against the budget's keystream (TestDrawReadsFixedWords).
const (
	laplaceWords  = 128
	gaussianWords = 512
)

// wordBudget is the number of words a draw of s computes (above).
func wordBudget(s sampler) int {
	if _, ok := s.(*noise.DiscreteGaussian); ok {
		return gaussianWords
	}
	return laplaceWords
}

// drawPadded draws one value of s from src, its first wordBudget(s)
// words computed at once (into scratch, of at least gaussianWords
// words) when src is a noise.Stream.
func drawPadded(s sampler, src noise.Source, scratch []uint64) int64 {
	words := scratch[:wordBudget(s)]
	if st, ok := src.(*noise.Stream); ok {
		st.Fill(words)
	} else {
		for i := range words {
			words[i] = src.Uint64()
		}
	}
	return s.Sample(&prefetched{words: words, src: src})
}

// prefetched is a Source that reads words, then src.
type prefetched struct {
	words []uint64
	src   noise.Source
}

func (p *prefetched) Uint64() uint64 {
	if len(p.words) == 0 {
		return p.src.Uint64()
	}
	w := p.words[0]
	p.words = p.words[1:]
	return w
}
