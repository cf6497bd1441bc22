//go:build amd64 && !purego

package fss

// node4Args are the arguments of fieldNode4AVX512 and fieldNode5AVX512;
// the assembly reads the fields at offsets 0, 8, …, 112. Block rows of
// component pairs are stride bytes apart.
type node4Args struct {
	seeds, pmask, pval, vcw *block
	cwL, cwR                *block
	lseed, rseed            *block // nil: that child is not wanted
	lmask, rmask            *block
	lval, rval              *block
	n                       int // seeds, a multiple of 32
	stride                  int
	keys                    *[176]byte // fixed key 0's schedule, the others after it
}

// fieldNode4AVX512 is the fused inner-node step (fwide.go); it returns a
// non-zero word when a value word is ≥ p.
//
//go:noescape
func fieldNode4AVX512(a *node4Args) uint64

// fieldNode5AVX512 is fieldNode4AVX512 for m = 5, three rows of
// component pairs.
//
//go:noescape
func fieldNode5AVX512(a *node4Args) uint64

// leaf4Args are the arguments of fieldLeaf4AVX512 and fieldLeaf5AVX512;
// the assembly reads the fields at offsets 0, 8, …, 72.
type leaf4Args struct {
	seeds, mask, val, final *block
	out                     *Fp // element at of key 0's staging row
	rowBytes                int // bytes between two keys' staging rows
	n                       int // seeds, a multiple of 32
	stride                  int
	neg                     uint64     // all ones: negate (party 1)
	keys                    *[176]byte // fixed key 1's schedule, key 2's after it
}

// fieldLeaf4AVX512 is the fused leaf step (fwide.go); it returns a
// non-zero word when a leaf word is ≥ p.
//
//go:noescape
func fieldLeaf4AVX512(a *leaf4Args) uint64

// fieldLeaf5AVX512 is fieldLeaf4AVX512 for m = 5: each key's five
// shares at out in its staging row.
//
//go:noescape
func fieldLeaf5AVX512(a *leaf4Args) uint64

// wide4Accel reports whether the fused kernels run here: VAES on ZMM
// registers needs AVX-512 too.
func wide4Accel() bool { return useVAES && useAVX512 }

// node4Kernel runs the fused inner-node step for m = 4 or 5 components
// on the x.keys seeds of st at depth d.
func node4Kernel(x *wide4, m, d int, st *fieldState, children *[2]fieldState, need [2]bool) uint64 {
	n, last := x.keys, (fieldLeafBlocks(m)-1)*chunkKeys+x.keys-1
	_, _, _ = st.seed[n-1], st.maskB[n-1], st.valB[last]
	_, _, _ = x.valCW[d][last], x.seedCW[d][0][n-1], x.seedCW[d][1][n-1]
	a := node4Args{
		seeds: &st.seed[0], pmask: &st.maskB[0], pval: &st.valB[0], vcw: &x.valCW[d][0],
		cwL: &x.seedCW[d][0][0], cwR: &x.seedCW[d][1][0],
		n: n, stride: 16 * chunkKeys, keys: &roundKeys[0],
	}
	if need[0] {
		a.lseed = &children[0].seed[0]
	}
	if need[1] {
		a.rseed = &children[1].seed[0]
	}
	for side := range children {
		ch := &children[side]
		_, _, _ = ch.seed[n-1], ch.maskB[n-1], ch.valB[last]
	}
	a.lmask, a.rmask = &children[0].maskB[0], &children[1].maskB[0]
	a.lval, a.rval = &children[0].valB[0], &children[1].valB[0]
	if m == 5 {
		return fieldNode5AVX512(&a)
	}
	return fieldNode4AVX512(&a)
}

// leaf4Kernel runs the fused leaf step for m = 4 or 5 components on the
// x.keys seeds of st, writing elements at … at+m−1 of staged[i] for
// every key i. The staging rows must be consecutive slices of one array,
// as newFieldWalker cuts them, each as long as the walker's run (leafRun
// or visitRun leaves of m elements).
func leaf4Kernel(x *wide4, m int, st *fieldState, staged [][]Fp, at int, party uint64) uint64 {
	n, last := x.keys, (fieldLeafBlocks(m)-1)*chunkKeys+x.keys-1
	_, _, _, _ = st.seed[n-1], st.maskB[n-1], st.valB[last], x.final[last]
	_ = staged[n-1][at+m-1]
	a := leaf4Args{
		seeds: &st.seed[0], mask: &st.maskB[0], val: &st.valB[0], final: &x.final[0],
		out: &staged[0][at], rowBytes: 8 * len(staged[0]), n: n, stride: 16 * chunkKeys,
		neg: -party, keys: &roundKeys[1],
	}
	if m == 5 {
		return fieldLeaf5AVX512(&a)
	}
	return fieldLeaf4AVX512(&a)
}
