package fss

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// EvalFieldBatch writes to out[k] the shares of keys[k] at every point:
// out[k][j·m + c] = EvalField(keys[k], points[j])[c]. Unlike SumBatch it
// keeps every key's shares apart, as verifying a report needs them.
// Points must be strictly increasing and below 2^n; all keys must share n,
// m and the party bit; len(out[k]) must be len(points)·m.
//
// Each key's tree is walked once for all points, expanding each distinct
// node on their paths once, with chunks of keys walked in lockstep (every
// AES call encrypts one block per key of the chunk, eight in flight) on
// GOMAXPROCS goroutines.
func EvalFieldBatch(keys []*FieldKey, points []uint64, out [][]Fp) error {
	return evalFieldBatch(keys, points, out, false, runtime.GOMAXPROCS(0))
}

// FieldPrefixes writes to out[k] key k's share of the prefix vector over
// the whole domain: out[k][j·m + c] = EvalField(keys[k], Point(j))[c] for
// every 0-based prefix j < N, which the other server's share completes to
// β_c·1[b ≤ j]. It is EvalFieldBatch at the mirrored points 0 … N − 1.
func (p PrefixDomain) FieldPrefixes(keys []*FieldKey, out [][]Fp) error {
	return p.fieldPrefixes(keys, out, runtime.GOMAXPROCS(0))
}

// fieldPrefixes is FieldPrefixes on at most the given number of
// goroutines.
func (p PrefixDomain) fieldPrefixes(keys []*FieldKey, out [][]Fp, workers int) error {
	for i, k := range keys {
		if k != nil && k.k.nbits != p.nbits {
			return fmt.Errorf("fss: FieldPrefixes: key %d has n = %d, the domain of %d bins has n = %d", i, k.k.nbits, p.bins, p.nbits)
		}
	}
	points := make([]uint64, p.bins)
	for x := range points {
		points[x] = uint64(x)
	}
	return evalFieldBatch(keys, points, out, true, workers)
}

// evalFieldBatch is EvalFieldBatch on at most the given number of
// goroutines, writing point j to row len(points)−1−j when reverse is set.
func evalFieldBatch(keys []*FieldKey, points []uint64, out [][]Fp, reverse bool, workers int) error {
	if err := checkFieldBatch(keys, points, out); err != nil {
		return fmt.Errorf("fss: EvalFieldBatch: %w", err)
	}
	if len(points) == 0 {
		return nil
	}
	first := &keys[0].k
	chunks := (len(keys) + chunkKeys - 1) / chunkKeys
	var next atomic.Int64
	work := func() {
		w := newFieldWalker(first.nbits, first.m, points, reverse)
		for c := int(next.Add(1) - 1); c < chunks; c = int(next.Add(1) - 1) {
			lo, hi := c*chunkKeys, min((c+1)*chunkKeys, len(keys))
			w.run(keys[lo:hi], out[lo:hi])
		}
	}
	var wg sync.WaitGroup
	for range max(1, min(workers, chunks)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return nil
}

// checkFieldBatch checks the arguments of evalFieldBatch.
func checkFieldBatch(keys []*FieldKey, points []uint64, out [][]Fp) error {
	if len(keys) == 0 {
		return errors.New("no keys")
	}
	if len(out) != len(keys) {
		return fmt.Errorf("%d output vectors for %d keys", len(out), len(keys))
	}
	if keys[0] == nil {
		return errors.New("key 0 is nil")
	}
	first := &keys[0].k
	for i, fk := range keys {
		switch {
		case fk == nil:
			return fmt.Errorf("key %d is nil", i)
		case fk.k.nbits != first.nbits || fk.k.m != first.m || fk.k.party != first.party:
			return fmt.Errorf("key %d has (party, n, m) = (%d, %d, %d), key 0 has (%d, %d, %d)",
				i, fk.k.party, fk.k.nbits, fk.k.m, first.party, first.nbits, first.m)
		case len(out[i]) != len(points)*first.m:
			return fmt.Errorf("output %d has %d elements, want %d points × %d components", i, len(out[i]), len(points), first.m)
		}
	}
	return checkPoints(points, first.nbits)
}

// fieldState is the state of one tree node for every key of a chunk.
type fieldState struct {
	seed []block    // per key
	mask []uint64   // per key: the control bit t as a mask
	val  [][]lazyFp // per component, per key: V_c on the path from the root, unsigned
}

// lazyFp is a sum of PRG blocks and field elements as the integer
// top·2^128 + hi·2^64 + lo, reduced mod p only at the leaf: adding a
// 128-bit block is then two additions with carry instead of a reduction
// and a modular addition. A path adds at most 2 terms per level and 2 at
// the leaf, so top < 2·64 + 2 never overflows.
type lazyFp struct{ lo, hi, top uint64 }

// add returns a plus the 128-bit block b (b[1]·2^64 + b[0]) and the word w.
func (a lazyFp) add(b block, w uint64) lazyFp {
	var c1, c2 uint64
	a.lo, c1 = bits.Add64(a.lo, b[0], 0)
	a.hi, c2 = bits.Add64(a.hi, b[1], c1)
	a.top += c2
	a.lo, c1 = bits.Add64(a.lo, w, 0)
	a.hi, c2 = bits.Add64(a.hi, 0, c1)
	a.top += c2
	return a
}

// reduce returns a mod p; 2^128 ≡ −2^32 (mod p).
func (a lazyFp) reduce() Fp {
	return reduce128(a.hi, a.lo).Sub(Fp(a.top << 32))
}

// fieldWalker is the field DCF's walker: walker with values per key.
type fieldWalker struct {
	n, m    int
	points  []uint64
	reverse bool
	keys    int
	party   uint64
	out     [][]Fp
	state   [][2]fieldState // state[d][side]; state[0][0] the root
	cw      []levelCW       // per depth; val holds field elements
	final   [][]uint64      // per component, per key
	seedOut [2][]block
	valOut  [2][]block
}

func newFieldWalker(n, m int, points []uint64, reverse bool) *fieldWalker {
	perKey := func() [][]uint64 {
		rows := make([][]uint64, m)
		for c := range rows {
			rows[c] = make([]uint64, chunkKeys)
		}
		return rows
	}
	newState := func() fieldState {
		st := fieldState{seed: make([]block, chunkKeys), mask: make([]uint64, chunkKeys), val: make([][]lazyFp, m)}
		for c := range st.val {
			st.val[c] = make([]lazyFp, chunkKeys)
		}
		return st
	}
	w := &fieldWalker{
		n: n, m: m, points: points, reverse: reverse,
		state:   make([][2]fieldState, n+1),
		cw:      make([]levelCW, n),
		final:   perKey(),
		seedOut: [2][]block{make([]block, chunkKeys), make([]block, chunkKeys)},
		valOut:  [2][]block{make([]block, chunkKeys), make([]block, chunkKeys)},
	}
	w.state[0][0] = newState()
	for d := 1; d <= n; d++ {
		w.state[d] = [2]fieldState{newState(), newState()}
	}
	for d := range w.cw {
		w.cw[d] = levelCW{
			seedLo: [2][]uint64{make([]uint64, chunkKeys), make([]uint64, chunkKeys)},
			seedHi: make([]uint64, chunkKeys),
			val:    perKey(),
		}
	}
	return w
}

// run writes the shares of up to chunkKeys keys at all points to out.
func (w *fieldWalker) run(keys []*FieldKey, out [][]Fp) {
	w.keys, w.out, w.party = len(keys), out, uint64(keys[0].k.party)
	root := &w.state[0][0]
	for i, fk := range keys {
		root.seed[i], root.mask[i] = fk.k.seed, -uint64(fk.k.party)
		for c := range root.val {
			root.val[c][i] = lazyFp{}
		}
		loadKey(w.cw, w.final, i, &fk.k)
	}
	w.walk(0, root, 0, len(w.points))
}

// sideKeys returns the fixed keys of the two children's outputs (seed
// when comp < 0, else value comp) and which of them are wanted: when only
// the right child is, its key comes first.
func (w *fieldWalker) sideKeys(comp int, need [2]bool) (ka, kb int, a, b []block) {
	keys := [2]int{0, fieldRightSeedKey(w.m)}
	if comp >= 0 {
		keys = [2]int{1 + comp, 1 + w.m + comp}
	}
	outs := [2][]block{w.seedOut[0][:w.keys], w.seedOut[1][:w.keys]}
	if comp >= 0 {
		outs = [2][]block{w.valOut[0][:w.keys], w.valOut[1][:w.keys]}
	}
	switch {
	case need[0] && need[1]:
		return keys[0], keys[1], outs[0], outs[1]
	case need[0]:
		return keys[0], 0, outs[0], nil
	default:
		return keys[1], 0, outs[1], nil
	}
}

// walk visits the node at depth d whose subtree holds points[lo:hi].
func (w *fieldWalker) walk(d int, st *fieldState, lo, hi int) {
	if d == w.n {
		w.leaf(st, lo)
		return
	}
	mid := splitPoints(w.points, lo, hi, w.n-1-d)
	need := [2]bool{lo < mid, mid < hi}
	seeds, mask := st.seed[:w.keys], st.mask[:w.keys]
	ka, kb, a, b := w.sideKeys(-1, need)
	hashEach(ka, kb, seeds, a, b)
	children := &w.state[d+1]
	cw := &w.cw[d]
	for side := range need {
		if need[side] {
			childSeeds(cw, side, w.seedOut[side], mask, children[side].seed, children[side].mask)
		}
	}
	for c := 0; c < w.m; c++ {
		ka, kb, a, b := w.sideKeys(c, need)
		hashEach(ka, kb, seeds, a, b)
		parent, vcw := st.val[c][:len(mask)], cw.val[c][:len(mask)]
		for side := range need {
			if need[side] {
				addValues(children[side].val[c][:len(mask)], parent, w.valOut[side][:len(mask)], vcw, mask)
			}
		}
	}
	if need[0] {
		w.walk(d+1, &children[0], lo, mid)
	}
	if need[1] {
		w.walk(d+1, &children[1], mid, hi)
	}
}

// addValues sets dst[i] = parent[i] + Convert(v[i]) + t_i·VCW[i] for every
// key i of the chunk: Eval's value step, reduced later.
func addValues(dst, parent []lazyFp, v []block, vcw, mask []uint64) {
	dst, parent, v, vcw = dst[:len(mask)], parent[:len(mask)], v[:len(mask)], vcw[:len(mask)]
	for i, mk := range mask {
		dst[i] = parent[i].add(v[i], vcw[i]&mk)
	}
}

// leaf writes every key's share at point p: the path value plus the leaf
// value Convert(s^(n)) and t·CW^(n+1), times (−1)^b.
func (w *fieldWalker) leaf(st *fieldState, p int) {
	row := p
	if w.reverse {
		row = len(w.points) - 1 - p
	}
	mask := st.mask[:w.keys]
	for c := 0; c < w.m; c += 2 { // two components per AES call
		kb, second := 0, []block(nil)
		if c+1 < w.m {
			kb, second = 2+c, w.valOut[1][:w.keys]
		}
		hashEach(1+c, kb, st.seed[:w.keys], w.valOut[0][:w.keys], second)
		for j := c; j < min(c+2, w.m); j++ {
			w.leafComponent(j, row, st.val[j][:len(mask)], w.valOut[j-c][:len(mask)], mask)
		}
	}
}

// leafComponent writes component c of every key's share at row.
func (w *fieldWalker) leafComponent(c, row int, val []lazyFp, leafVal []block, mask []uint64) {
	final := w.final[c][:len(mask)]
	at := row*w.m + c
	if w.party == 0 { // the party bit is public: branch on it
		for i, mk := range mask {
			w.out[i][at] = val[i].add(leafVal[i], final[i]&mk).reduce()
		}
		return
	}
	for i, mk := range mask {
		w.out[i][at] = val[i].add(leafVal[i], final[i]&mk).reduce().Neg()
	}
}

// GenField returns the two field keys of a party in 0-based bin b with
// payload β: GenField(N − b, β, Bits(), rand).
func (p PrefixDomain) GenField(bin int, beta []Fp, rand io.Reader) (k0, k1 *FieldKey, err error) {
	alpha, err := p.alpha(bin)
	if err != nil {
		return nil, nil, fmt.Errorf("fss: %w", err)
	}
	return GenField(alpha, beta, p.nbits, rand)
}
