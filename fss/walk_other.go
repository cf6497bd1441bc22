//go:build !amd64 || purego

package fss

// expandAccel would run the first keys of walker.expand's loop on vector
// instructions; this platform runs them all in Go.
func expandAccel(out []block, cwLo, cwHi, mask []uint64, seed []block, childMask []uint64) int {
	return 0
}

// maskedSumAccel would sum the first keys of maskedSum on vector
// instructions; this platform sums them all in Go.
func maskedSumAccel(add, mask []uint64) (sum uint64, done int) { return 0, 0 }

// addBothAccel would run the first keys of addBothValues on vector
// instructions; this platform runs them all in Go.
func addBothAccel(dl, dr, par, vcw, mask []uint64, vl []block, hl int, vr []block, hr int) (done int, rej uint64) {
	return 0, 0
}

// leafAccel would run the first keys of leafShares on vector
// instructions; this platform runs them all in Go.
func leafAccel(out [][]Fp, at int, val, final [][]uint64, vals [][]block, mask []uint64, neg uint64) (done int, rej uint64) {
	return 0, 0
}
