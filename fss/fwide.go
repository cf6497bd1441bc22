package fss

// The field walker's fused path for m = 4 components (wide4): on CPUs with
// VAES and AVX-512 (fwide_amd64.s) one kernel per inner node runs the
// PRG and the whole value and seed step, and one per leaf the PRG and
// the shares, with the values taken from the AES output in registers.
// The walk's state is kept in the PRG's own layout, a pair of components
// per 128-bit block (fieldState.valB, maskB), so nothing is transposed
// and no PRG output goes through memory. The fused path takes the
// largest multiple of wide4Keys keys of a chunk, the generic one the rest.

// wide4Keys is the number of keys the fused kernels take per group.
const wide4Keys = 32

// wide4 holds the correction words of a chunk in the fused path's
// layout; a fieldState's pair q of components of key i is at
// q·chunkKeys + i of its block rows.
type wide4 struct {
	keys   int          // keys of the current walk, a multiple of wide4Keys; 0: generic path
	seedCW [][2][]block // per depth, per side, per key: (sCW_lo | tCW_side, sCW_hi)
	valCW  [][]block    // per depth: VCW as two rows of component pairs
	final  []block      // CW^(n+1) as two rows of component pairs
}

// fusedShape reports whether walkers of m components take the fused
// path: m = 4, on a platform with the kernels.
func fusedShape(m int) bool { return m == 4 && wide4Accel() }

// newWide4 gives w the fused path's buffers when it takes that path
// (fusedShape); otherwise w keeps the generic one.
func newWide4(w *fieldWalker) {
	if !fusedShape(w.m) {
		return
	}
	x := &wide4{seedCW: make([][2][]block, w.n), valCW: make([][]block, w.n), final: make([]block, 2*chunkKeys)}
	for d := range x.seedCW {
		x.seedCW[d] = [2][]block{make([]block, chunkKeys), make([]block, chunkKeys)}
		x.valCW[d] = make([]block, 2*chunkKeys)
	}
	for d := range w.state {
		for side := range w.state[d] {
			if st := &w.state[d][side]; st.seed != nil {
				st.maskB, st.valB = make([]block, chunkKeys), make([]block, 2*chunkKeys)
			}
		}
	}
	w.wide = x
}

// runFused walks the first multiple of wide4Keys of keys on the fused
// path, when w has it, writing their shares to out (or handing them to
// w.visit, out nil), and returns the keys and outputs left for the
// generic path, w.base then the index of the first of them.
func (w *fieldWalker) runFused(keys []*FieldKey, out [][]Fp) ([]*FieldKey, [][]Fp) {
	if w.wide == nil {
		return keys, out
	}
	n := len(keys) &^ (wide4Keys - 1)
	if n > 0 {
		w.keys, w.out, w.party = n, nil, uint64(keys[0].k.party)
		if out != nil {
			w.out, out = out[:n], out[n:]
		}
		w.runWide4(keys[:n])
		w.walk(0, &w.state[0][0], 0, len(w.points))
		w.base += n
	}
	w.wide.keys = 0
	return keys[n:], out
}

// fused reports whether the current walk is on the fused path.
func (w *fieldWalker) fused() bool { return w.wide != nil && w.wide.keys > 0 }

// runWide4 sets up the root of the fused path for keys, a multiple of
// wide4Keys of them.
func (w *fieldWalker) runWide4(keys []*FieldKey) {
	x, root := w.wide, &w.state[0][0]
	x.keys = len(keys)
	for i := range x.keys {
		k := &keys[i].k
		t := -uint64(k.party)
		root.seed[i], root.maskB[i] = k.seed, block{t, t}
		root.valB[i], root.valB[chunkKeys+i] = block{}, block{}
		for d := range x.seedCW {
			cw := k.cw[d*k.stride() : (d+1)*k.stride()]
			for side := range 2 {
				x.seedCW[d][side][i] = block{cw[0] | k.tcw[side]>>uint(d)&1, cw[1]}
			}
			x.valCW[d][i], x.valCW[d][chunkKeys+i] = block{cw[2], cw[3]}, block{cw[4], cw[5]}
		}
		x.final[i], x.final[chunkKeys+i] = block{k.final[0], k.final[1]}, block{k.final[2], k.final[3]}
	}
}

// node4 is the fused step at the inner node at depth d with state st:
// the wanted children's seeds and masks, both children's values, and
// the values of the keys with a PRG word ≥ p redone (resample4).
func (w *fieldWalker) node4(d int, st *fieldState, need [2]bool) {
	children := &w.state[d+1]
	if node4Kernel(w.wide, d, st, children, need) != 0 || forceResample {
		w.resample4(d, st, children)
	}
}

// resample4 redoes both children's values of the keys whose first eight
// value words are not all below p (every key under forceResample), with
// their values from fieldValues.
func (w *fieldWalker) resample4(d int, st *fieldState, children *[2]fieldState) {
	const m = 4
	x := w.wide
	for i := range x.keys {
		if !w.rejectedWords(st.seed[i], 2*m) {
			continue
		}
		var vals [2 * m]Fp
		fieldValues(st.seed[i], m, m, vals[:])
		mk := st.maskB[i][0]
		for c := range m {
			at, h := c/2*chunkKeys+i, c%2
			base := addP(st.valB[at][h], x.valCW[d][at][h]&mk)
			for side := range children {
				children[side].valB[at][h] = addP(base, uint64(vals[side*m+c]))
			}
		}
	}
}

// rejectedWords reports whether one of the first words value words of
// seed s is not below p (always under forceResample).
func (w *fieldWalker) rejectedWords(s block, words int) bool {
	var stream [2 * 4]uint64
	streamWords(s, 1, (words+1)/2, stream[:words])
	var rej uint64
	for _, x := range stream[:words] {
		rej |= rejected(x)
	}
	return rej != 0 || forceResample
}

// leaf4 stages the shares of every key at the leaf with state st in
// slot of the staging rows, and redoes those of the keys with a leaf
// word ≥ p (resampleLeaf4).
func (w *fieldWalker) leaf4(st *fieldState, slot int) {
	if leaf4Kernel(w.wide, st, w.staged, slot*4, w.party) != 0 || forceResample {
		w.resampleLeaf4(st, slot)
	}
}

// resampleLeaf4 rewrites staged slot for the keys whose four leaf words
// are not all below p, with their leaf values from fieldLeaf.
func (w *fieldWalker) resampleLeaf4(st *fieldState, slot int) {
	const m = 4
	x := w.wide
	for i := range x.keys {
		if !w.rejectedWords(st.seed[i], m) {
			continue
		}
		var vals [m]Fp
		fieldLeaf(st.seed[i], vals[:])
		mk := st.maskB[i][0]
		for c := range m {
			at, h := c/2*chunkKeys+i, c%2
			v := canonical(addP(addP(st.valB[at][h], uint64(vals[c])), x.final[at][h]&mk))
			w.staged[i][slot*m+c] = negateFieldIf(v, w.party)
		}
	}
}
