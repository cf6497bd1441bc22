//go:build race

package fss

// raceEnabled reports a -race build, in which sync.Pool drops items at
// random, so allocation counts vary between runs.
const raceEnabled = true
