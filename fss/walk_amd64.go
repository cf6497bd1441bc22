//go:build amd64 && !purego

package fss

// With AVX2 (useAVX2), the batch walker's per-key loops around the PRG run
// four keys per instruction: expandAVX2 and maskedSumAVX2.

var useAVX2 bool

// expandArgs are the arguments of expandAVX2; the assembly reads the
// fields at offsets 0, 8, …, 48.
type expandArgs struct {
	out        *block
	cwLo, cwHi *uint64
	mask       *uint64
	seed       *block
	childMask  *uint64
	n          int // a multiple of 4
}

// expandAVX2 is the loop of walker.expand on AVX2.
//
//go:noescape
func expandAVX2(a *expandArgs)

// maskedSumAVX2 is maskedSum on AVX2 for n keys, a multiple of 8.
//
//go:noescape
func maskedSumAVX2(add, mask *uint64, n int) uint64

// expandAccel runs walker.expand's loop (expandKeys) on the first keys,
// a multiple of 4, with AVX2, and returns how many it did: 0 without.
func expandAccel(out []block, cwLo, cwHi, mask []uint64, seed []block, childMask []uint64) int {
	n := len(mask) &^ 3
	if !useAVX2 || n == 0 {
		return 0
	}
	_, _, _, _, _ = out[n-1], cwLo[n-1], cwHi[n-1], seed[n-1], childMask[n-1]
	expandAVX2(&expandArgs{out: &out[0], cwLo: &cwLo[0], cwHi: &cwHi[0], mask: &mask[0], seed: &seed[0], childMask: &childMask[0], n: n})
	return n
}

// maskedSumAccel returns Σ_{i<done} add[i] & mask[i] over the first keys,
// a multiple of 8, with AVX2: done is 0 without.
func maskedSumAccel(add, mask []uint64) (sum uint64, done int) {
	n := len(mask) &^ 7
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	_ = add[n-1]
	return maskedSumAVX2(&add[0], &mask[0], n), n
}
