// Package fsshook lets the DCF benchmark of package bench time two loops
// that package fss keeps unexported: fss sets the functions when it is
// initialised. Nothing else may call or set them.
package fsshook

// SumBatch is fss's batch evaluator on at most workers goroutines; keys
// is a []*fss.Key.
var SumBatch func(keys any, points, acc []uint64, workers int) error

// PRG runs fss's MMO hash once on each block of seeds, writing out.
var PRG func(seeds, out [][2]uint64)
