package main

import (
	"fmt"
	"io"
	"math/bits"
)

// maxBins is the largest --bins the commands that release on this
// machine (ecdf, simulate) or on the servers (manifest). The grid
// package allows 2^26, but the time and memory of a release grow
// linearly in N (EXPERIMENTS.md, "Grid size and the ecdf command": 4 s
// and 170 MB at 2^20, 32 s and 640 MB at 2^22, over ten minutes and
// 3.9 GB at 2^26, without interval draws), and every prefix sums about
// log2 N noisy nodes, so a finer grid resolves nothing a coarser one
// does not at any realistic number of values.
const maxBins = 1 << 20

// checkBins refuses a --bins beyond maxBins, with the reason.
func checkBins(n int) error {
	if n > maxBins {
		return fmt.Errorf("--bins %d is more than %d: a release over so many bins takes minutes and gigabytes (each bin holds noisy tree nodes and every threshold is read), "+
			"and no data set of realistic size is resolved better by it; take a coarser grid (a log scale for long tails)", n, maxBins)
	}
	return nil
}

// slowDraws is the number of noisy prefix sums (interval draws ×
// thresholds read) beyond which the interval draws take more than a
// few seconds on one core: each prefix sums about log2 N node draws.
const slowDraws = 1 << 25

// noteSlowDraws tells w, when the interval draws of a release read at
// prefixes thresholds of a grid of bins bins will take long, how many
// noise draws they are and how to avoid them, so a long run is never
// silent; it says nothing otherwise.
func noteSlowDraws(w io.Writer, draws, prefixes, bins int) {
	if draws <= 0 || draws*prefixes < slowDraws {
		return
	}
	nodes := float64(draws) * float64(prefixes) * float64(bits.Len(uint(bins)))
	fmt.Fprintf(w, "fedecdf: the 95 %% intervals take %d Monte-Carlo draws of the noise at %d thresholds (about %.2g node draws): this can take minutes; "+
		"--interval-draws 0 leaves the intervals out, fewer draws or --bins shorten it\n", draws, prefixes, nodes)
}
