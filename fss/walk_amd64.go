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

// The field walker's value steps on AVX2: addBothAVX2 and leafAVX2, four
// keys per instruction, reading the words of PRG blocks at a 16-byte
// stride (so their slices hold one block beyond the keys).

// addBothArgs are the arguments of addBothAVX2; the assembly reads the
// fields at offsets 0, 8, …, 56.
type addBothArgs struct {
	left, right, parent *uint64
	vcw, mask           *uint64
	vl, vr              *uint64 // word hl of block 0, word hr of block 0
	n                   int     // a multiple of 4
}

// addBothAVX2 is addBothValues's loop on AVX2; it returns all ones when
// one of the words read is not below p, else 0.
//
//go:noescape
func addBothAVX2(a *addBothArgs) uint64

// leafArgs are the arguments of leafAVX2; the assembly reads the fields at
// offsets 0, 8, …, 56.
type leafArgs struct {
	val, final, mask *uint64
	words            *uint64 // word h of block 0
	outs             *[]Fp   // the keys' output vectors
	at               int     // element written in each
	n                int     // a multiple of 4
	neg              uint64  // all ones: negate (party 1)
}

// leafAVX2 is fieldWalker.leafComponent's loop on AVX2; it returns all
// ones when one of the words read is not below p, else 0.
//
//go:noescape
func leafAVX2(a *leafArgs) uint64

// addBothAccel runs addBothValues's loop on the first keys, a multiple of
// 4, with AVX2 and returns how many it did (0 without) and whether a word
// was rejected.
func addBothAccel(dl, dr, par, vcw, mask []uint64, vl []block, hl int, vr []block, hr int) (done int, rej uint64) {
	n := len(mask) &^ 3
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	_, _, _, _, _, _ = dl[n-1], dr[n-1], par[n-1], vcw[n-1], vl[n], vr[n]
	r := addBothAVX2(&addBothArgs{left: &dl[0], right: &dr[0], parent: &par[0], vcw: &vcw[0], mask: &mask[0],
		vl: &vl[0][hl&1], vr: &vr[0][hr&1], n: n})
	return n, r & 1
}

// leafAccel runs fieldWalker.leafComponent's loop on the first keys, a
// multiple of 4, with AVX2 and returns how many it did (0 without) and
// whether a word was rejected. Every out[i] must hold element at, as
// checkFieldBatch ensures.
func leafAccel(out [][]Fp, at int, val, final, mask []uint64, words []block, h int, neg uint64) (done int, rej uint64) {
	n := len(mask) &^ 3
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	_, _, _, _ = out[n-1], val[n-1], final[n-1], words[n]
	r := leafAVX2(&leafArgs{val: &val[0], final: &final[0], mask: &mask[0], words: &words[0][h&1], outs: &out[0], at: at, n: n, neg: neg})
	return n, r & 1
}
