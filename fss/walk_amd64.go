//go:build amd64 && !purego

package fss

// With AVX2 (useAVX2), the batch walker's per-key loops around the PRG run
// four keys per instruction: expandAVX2 and maskedSumAVX2.

var useAVX2 bool

// With AVX-512 (useAVX512), the field walker's value step runs eight keys
// per instruction: addBothAVX512.
var useAVX512 bool

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

// addBothAVX512 is addBothAVX2 on AVX-512 for a.n a multiple of 8; it
// returns a non-zero word when one of the words read is not below p.
//
//go:noescape
func addBothAVX512(a *addBothArgs) uint64

// leafArgs are the arguments of leafAVX2; the assembly reads the fields at
// offsets 0, 8, …, 64.
type leafArgs struct {
	val, final, words *[maxFieldComponents]*uint64 // per component: path values, final words, word c&1 of block 0 of value block c/2
	mask              *uint64
	outs              *[]Fp  // the keys' output vectors
	at                int    // element of component 0 in each
	m                 int    // components
	n                 int    // keys, a multiple of 4
	neg               uint64 // all ones: negate (party 1)
}

// leafAVX2 is leafShares's loop on AVX2; it returns all ones when one of
// the words read is not below p, else 0.
//
//go:noescape
func leafAVX2(a *leafArgs) uint64

// leaf4AVX512 is leafAVX2 on AVX-512 for a.m = 4 and a.n a multiple of 8:
// it transposes eight keys' four elements and writes each key's with one
// 32-byte store. It returns a non-zero word when a word read is ≥ p.
//
//go:noescape
func leaf4AVX512(a *leafArgs) uint64

// addBothAccel runs addBothValues's loop on the first keys, a multiple of
// 8 with AVX-512 or of 4 with AVX2, and returns how many it did (0
// without) and whether a word was rejected.
func addBothAccel(dl, dr, par, vcw, mask []uint64, vl []block, hl int, vr []block, hr int) (done int, rej uint64) {
	n := len(mask) &^ 3
	if useAVX512 {
		n = len(mask) &^ 7
	}
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	_, _, _, _, _, _ = dl[n-1], dr[n-1], par[n-1], vcw[n-1], vl[n], vr[n]
	a := addBothArgs{left: &dl[0], right: &dr[0], parent: &par[0], vcw: &vcw[0], mask: &mask[0],
		vl: &vl[0][hl&1], vr: &vr[0][hr&1], n: n}
	// Direct calls, not through a func value: go:noescape keeps a and
	// the arrays it points to on the stack.
	var r uint64
	if useAVX512 {
		r = addBothAVX512(&a)
	} else {
		r = addBothAVX2(&a)
	}
	if r != 0 {
		rej = 1
	}
	return n, rej
}

// leafAccel runs leafShares's loop on the first keys, a multiple of 8
// with AVX-512 and m = 4 (leaf4AVX512) or of 4 with AVX2, and returns
// how many it did (0 without) and whether a word was rejected. Every out[i] must hold elements at … at+m−1, as
// checkFieldBatch ensures.
func leafAccel(out [][]Fp, at int, val, final [][]uint64, vals [][]block, mask []uint64, neg uint64) (done int, rej uint64) {
	n, m := len(mask)&^3, len(val)
	wide := useAVX512 && m == 4 && len(mask) >= 8
	if wide {
		n = len(mask) &^ 7
	}
	if !useAVX2 || n == 0 {
		return 0, 0
	}
	var pv, pf, pw [maxFieldComponents]*uint64
	for c := range m {
		_, _, _ = val[c][n-1], final[c][n-1], vals[c/2][n]
		pv[c], pf[c], pw[c] = &val[c][0], &final[c][0], &vals[c/2][0][c&1]
	}
	_ = out[n-1]
	a := leafArgs{val: &pv, final: &pf, words: &pw, mask: &mask[0], outs: &out[0], at: at, m: m, n: n, neg: neg}
	var r uint64
	if wide {
		r = leaf4AVX512(&a)
	} else {
		r = leafAVX2(&a)
	}
	if r != 0 {
		rej = 1
	}
	return n, rej
}
