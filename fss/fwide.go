package fss

// The field walker's fused path for m = 4 and m = 5 components (wide4):
// on CPUs with VAES and AVX-512 (fwide_amd64.s) one kernel per inner node
// runs the PRG and the whole value and seed step, and one per leaf the
// PRG and the shares, with the values taken from the AES output in
// registers. The walk's state is kept in the PRG's own layout, a pair of
// components per 128-bit block (fieldState.valB, maskB; at m = 5 the
// third row holds component 4 and a 0), so nothing is transposed. At
// m = 5 the right child's components straddle the PRG's blocks (words
// 5 … 9 of H_3 … H_5) and are spliced in registers, with the raw blocks
// parked in the children's rows in between. The fused path takes the
// largest multiple of wide4Keys keys of a chunk, the generic one the rest.

// wide4Keys is the number of keys the fused kernels take per group.
const wide4Keys = 32

// maxFusedComponents is the most components the fused kernels take
// (fusedShape): the size of the scalar resampling's buffers.
const maxFusedComponents = 5

// wide4 holds the correction words of a chunk in the fused path's
// layout; a fieldState's pair q of components of key i is at
// q·chunkKeys + i of its block rows, fieldLeafBlocks(m) rows.
type wide4 struct {
	keys   int          // keys of the current walk, a multiple of wide4Keys; 0: generic path
	seedCW [][2][]block // per depth, per side, per key: (sCW_lo | tCW_side, sCW_hi)
	valCW  [][]block    // per depth: VCW as rows of component pairs
	final  []block      // CW^(n+1) as rows of component pairs
}

// fusedShape reports whether walkers of m components take the fused
// path: m = 4 or 5, on a platform with the kernels.
func fusedShape(m int) bool { return (m == 4 || m == maxFusedComponents) && wide4Accel() }

// newWide4 gives w the fused path's buffers when it takes that path
// (fusedShape); otherwise w keeps the generic one.
func newWide4(w *fieldWalker) {
	if !fusedShape(w.m) {
		return
	}
	rows := fieldLeafBlocks(w.m) * chunkKeys
	x := &wide4{seedCW: make([][2][]block, w.n), valCW: make([][]block, w.n), final: make([]block, rows)}
	for d := range x.seedCW {
		x.seedCW[d] = [2][]block{make([]block, chunkKeys), make([]block, chunkKeys)}
		x.valCW[d] = make([]block, rows)
	}
	for d := range w.state {
		for side := range w.state[d] {
			if st := &w.state[d][side]; st.seed != nil {
				st.maskB, st.valB = make([]block, chunkKeys), make([]block, rows)
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
	clear(root.valB) // the root's path values are 0
	for i := range x.keys {
		k := &keys[i].k
		t := -uint64(k.party)
		root.seed[i], root.maskB[i] = k.seed, block{t, t}
		for d := range x.seedCW {
			cw := k.cw[d*k.stride() : (d+1)*k.stride()]
			for side := range 2 {
				x.seedCW[d][side][i] = block{cw[0] | k.tcw[side]>>uint(d)&1, cw[1]}
			}
			pairRows(x.valCW[d], i, cw[2:])
		}
		pairRows(x.final, i, k.final)
	}
}

// pairRows writes components v of key i to rows of component pairs, a
// 0 after the last one when there are an odd number of them.
func pairRows(rows []block, i int, v []uint64) {
	for q := 0; 2*q < len(v); q++ {
		b := block{v[2*q]}
		if 2*q+1 < len(v) {
			b[1] = v[2*q+1]
		}
		rows[q*chunkKeys+i] = b
	}
}

// node4 is the fused step at the inner node at depth d with state st:
// the wanted children's seeds and masks and both children's values, all
// of the group's values redone (resample4) when a key has a value word
// ≥ p.
func (w *fieldWalker) node4(d int, st *fieldState, need [2]bool) {
	children := &w.state[d+1]
	if node4Kernel(w.wide, w.m, d, st, children, need) != 0 || forceResample {
		w.resample4(d, st, children)
	}
}

// resample4 redoes both children's values of every key of the group,
// with their values from fieldValues. It runs only when a key's first
// 2m value words are not all below p (or under forceResample); for the
// keys whose words are, fieldValues gives the kernel's own words, so
// their values are rewritten unchanged, and no key's stream is computed
// just to find out whether it needs redoing.
func (w *fieldWalker) resample4(d int, st *fieldState, children *[2]fieldState) {
	m, x := w.m, w.wide
	for i := range x.keys {
		var vals [2 * maxFusedComponents]Fp
		fieldValues(st.seed[i], m, m, vals[:2*m])
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

// leaf4 stages the shares of every key at the leaf with state st in
// slot of the staging rows, all of the group's redone (resampleLeaf4)
// when a key has a leaf word ≥ p.
func (w *fieldWalker) leaf4(st *fieldState, slot int) {
	if leaf4Kernel(w.wide, w.m, st, w.staged, slot*w.m, w.party) != 0 || forceResample {
		w.resampleLeaf4(st, slot)
	}
}

// resampleLeaf4 rewrites staged slot for every key of the group, with
// their leaf values from fieldLeaf. It runs only when a key's m leaf
// words are not all below p (or under forceResample); for the keys
// whose words are, fieldLeaf gives the kernel's own words, so their
// shares are rewritten unchanged.
func (w *fieldWalker) resampleLeaf4(st *fieldState, slot int) {
	m, x := w.m, w.wide
	for i := range x.keys {
		var vals [maxFusedComponents]Fp
		fieldLeaf(st.seed[i], vals[:m])
		mk := st.maskB[i][0]
		for c := range m {
			at, h := c/2*chunkKeys+i, c%2
			v := canonical(addP(addP(st.valB[at][h], uint64(vals[c])), x.final[at][h]&mk))
			w.staged[i][slot*m+c] = negateFieldIf(v, w.party)
		}
	}
}
