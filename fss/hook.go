package fss

import "github.com/fedecdf/fedecdf/internal/bench/fsshook"

// init hands the benchmark of `fedecdf bench fss` (internal/bench) the
// single-goroutine batch evaluator and the PRG it times.
func init() {
	fsshook.SumBatch = func(keys any, points, acc []uint64, workers int) error {
		_, err := sumBatch(keys.([]*Key), points, acc, false, workers)
		return err
	}
	fsshook.PRG = func(seeds, out [][2]uint64) { prgNode(1, seeds, out, nil, 0, nil) }
}
