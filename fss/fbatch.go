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
	return evalFieldBatch(keys, points, out, nil, false, runtime.GOMAXPROCS(0))
}

// FieldPrefixes writes to out[k] key k's share of the prefix vector over
// the whole domain: out[k][j·m + c] = EvalField(keys[k], Point(j))[c] for
// every 0-based prefix j < N, which the other server's share completes to
// β_c·1[b ≤ j]. It is EvalFieldBatch at the mirrored points 0 … N − 1.
func (p PrefixDomain) FieldPrefixes(keys []*FieldKey, out [][]Fp) error {
	return p.fieldPrefixes(keys, out, nil, runtime.GOMAXPROCS(0))
}

// FieldPrefixRuns is FieldPrefixes handing each key's shares to visit
// as the walk produces them, instead of writing them out: it calls
// visit(k, row, run) with key k's shares of the prefixes row … row + n − 1,
// run[i·m + c] that of prefix row + i, component c (n = len(run)/m), once
// for every prefix. The runs of a key come in order, from prefix 0 up,
// each of 32 prefixes but the last (of at most 32), so each starts at a
// multiple of 32. run is valid only during the call, and visit is
// called from several goroutines at once, never for one key at once.
// A caller that needs a function of the vector (a sketch, some of its
// components) computes it from the runs while they are in cache, without
// the whole vector in memory.
func (p PrefixDomain) FieldPrefixRuns(keys []*FieldKey, visit func(key, row int, run []Fp)) error {
	if visit == nil {
		return errors.New("fss: FieldPrefixRuns: nil visit")
	}
	return p.fieldPrefixes(keys, nil, visit, runtime.GOMAXPROCS(0))
}

// fieldPrefixes is FieldPrefixes (visit nil) or FieldPrefixRuns (out
// nil) on at most the given number of goroutines.
func (p PrefixDomain) fieldPrefixes(keys []*FieldKey, out [][]Fp, visit runVisitor, workers int) error {
	for i, k := range keys {
		if k != nil && k.k.nbits != p.nbits {
			return fmt.Errorf("fss: FieldPrefixes: key %d has n = %d, the domain of %d bins has n = %d", i, k.k.nbits, p.bins, p.nbits)
		}
	}
	points := make([]uint64, p.bins)
	for x := range points {
		points[x] = uint64(x)
	}
	return evalFieldBatch(keys, points, out, visit, true, workers)
}

// runVisitor consumes a key's staged run of shares (FieldPrefixRuns).
type runVisitor = func(key, row int, run []Fp)

// evalFieldBatch is EvalFieldBatch on at most the given number of
// goroutines, writing point j to row len(points)−1−j when reverse is set,
// or handing the runs to visit instead if it is not nil (out nil).
func evalFieldBatch(keys []*FieldKey, points []uint64, out [][]Fp, visit runVisitor, reverse bool, workers int) error {
	if err := checkFieldBatch(keys, points, out, visit != nil); err != nil {
		return fmt.Errorf("fss: EvalFieldBatch: %w", err)
	}
	if len(points) == 0 {
		return nil
	}
	first := &keys[0].k
	chunks := (len(keys) + chunkKeys - 1) / chunkKeys
	var next atomic.Int64
	work := func() {
		w := getFieldWalker(first.nbits, first.m, points, reverse, visit)
		defer putFieldWalker(w)
		for c := int(next.Add(1) - 1); c < chunks; c = int(next.Add(1) - 1) {
			lo, hi := c*chunkKeys, min((c+1)*chunkKeys, len(keys))
			w.base = lo
			if visit != nil {
				w.run(keys[lo:hi], nil)
			} else {
				w.run(keys[lo:hi], out[lo:hi])
			}
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

// checkFieldBatch checks the arguments of evalFieldBatch (out unless
// visited).
func checkFieldBatch(keys []*FieldKey, points []uint64, out [][]Fp, visited bool) error {
	if len(keys) == 0 {
		return errors.New("no keys")
	}
	if !visited && len(out) != len(keys) {
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
		case !visited && len(out[i]) != len(points)*first.m:
			return fmt.Errorf("output %d has %d elements, want %d points × %d components", i, len(out[i]), len(points), first.m)
		}
	}
	return checkPoints(points, first.nbits)
}

// fieldState is the state of one tree node for every key of a chunk.
type fieldState struct {
	seed []block    // per key
	mask []uint64   // per key: the control bit t as a mask
	val  [][]uint64 // per component, per key: V_c on the path from the root, lazily reduced (addP)
	// The fused path's layout (fwide.go): the mask in both words of a
	// block, and V as two rows of component pairs.
	maskB, valB []block
}

// addP returns a + x mod p as a 64-bit word congruent to it, not
// necessarily below p, for any word a and x < p: when a + x carries, the
// lost 2^64 ≡ 2^32 − 1 is added back, which cannot carry again (a + x −
// 2^64 ≤ p − 2). A path's value is carried this way, one addition and a
// conditional one per term, and made canonical at the leaf (canonical).
func addP(a, x uint64) uint64 {
	s, c := bits.Add64(a, x, 0)
	return s + 0xffff_ffff&-c
}

// canonical returns the element of F_p congruent to the word v.
func canonical(v uint64) Fp {
	d, borrow := bits.Sub64(v, Modulus, 0)
	return Fp(pick(borrow^1, d, v))
}

// rejected returns 1 when the PRG word w is not below p, else 0: w ≥ p
// exactly when w + 2^32 − 1 carries, as p = 2^64 − (2^32 − 1).
func rejected(w uint64) uint64 {
	_, c := bits.Add64(w, 0xffff_ffff, 0)
	return c
}

// fieldWalker is the field DCF's walker: walker with values per key.
type fieldWalker struct {
	n, m    int
	points  []uint64
	reverse bool
	keys    int
	party   uint64
	out     [][]Fp          // per key of the chunk, unless visit
	visit   runVisitor      // if not nil, takes the runs instead of out
	base    int             // the index of the chunk's first key, for visit
	state   [][2]fieldState // state[d][side]; state[0][0] the root
	cw      []levelCW       // per depth; val holds field elements
	final   [][]uint64      // per component, per key
	seedOut [2][]block
	vals    []block   // value block j of key i at vals[j·valStride + i]
	valOut  [][]block // per value block, per key: the rows of vals
	staged  [][]Fp    // per key: the shares of up to runLen leaves, in row order
	runLen  int       // leafRun, or visitRun for visit
	wide    *wide4    // the fused path for m = 4, 5 (fwide.go); nil: the generic one
}

// leafRun is the number of consecutive leaves whose shares the walker
// stages before writing them out: a leaf writes m elements to every key's
// staging row, a cache-resident leafRun·m·8 bytes per key (32 KB per chunk
// at m = 4), and every leafRun leaves each key's run is copied to its
// output vector in one sequential copy, instead of m elements to each of
// chunkKeys vectors per leaf, a store to a line of 2 MB of outputs per key
// that the cache rarely holds (EXPERIMENTS.md, "Tensor challenges: fused
// leaf step").
const leafRun = 16

// visitRun is leafRun when the runs go to a visitor (FieldPrefixRuns):
// 32 leaves, 64 KB of staging per chunk at m = 4, half in L1, so that
// the visitor's per-run work (a verifier's sketch, whose per-key state is
// larger than a run of 16) is spread over twice the shares
// (EXPERIMENTS.md, "Sketch at the leaves").
const visitRun = 32

// valStride is the row length of fieldWalker.vals: one block beyond the
// chunk, as the vector loops read the high words of blocks as 32-byte
// loads from a block's middle.
const valStride = chunkKeys + 1

// fieldWalkerPools holds idle field walkers per shape
// (fieldWalkerShape): a server evaluates a chunk of keys per call, and a
// walker's buffers are several times a key's output.
var fieldWalkerPools sync.Map

// getFieldWalker returns a field walker for keys of shape (n, m) at the
// points, handing its runs to visit if not nil, from its pool when there
// is one. Every field of its state is written before it is read (run,
// walk, leaf), as when one walker runs chunk after chunk.
func getFieldWalker(n, m int, points []uint64, reverse bool, visit runVisitor) *fieldWalker {
	runLen := leafRun
	if visit != nil {
		runLen = visitRun
	}
	w, _ := poolOf(&fieldWalkerPools, fieldWalkerShape(n, m, runLen)).Get().(*fieldWalker)
	if w == nil {
		w = newFieldWalker(n, m, runLen)
	}
	w.points, w.reverse, w.visit = points, reverse, visit
	return w
}

// putFieldWalker returns w to its pool, without its references to the
// caller's points, outputs and visitor.
func putFieldWalker(w *fieldWalker) {
	w.points, w.out, w.visit = nil, nil, nil
	poolOf(&fieldWalkerPools, fieldWalkerShape(w.n, w.m, w.runLen)).Put(w)
}

// fieldWalkerShape is the pool key of walkers of shape (n, m) staging
// runs of runLen leaves: whether they have the fused path depends on the
// accelerations in use.
func fieldWalkerShape(n, m, runLen int) [4]int {
	fused := 0
	if fusedShape(m) {
		fused = 1
	}
	return [4]int{n, m, fused, runLen}
}

// newFieldWalker returns a walker of n-bit keys with m components,
// staging runs of runLen leaves (leafRun, or visitRun for a visitor);
// its points are set by getFieldWalker.
func newFieldWalker(n, m, runLen int) *fieldWalker {
	perKey := func() [][]uint64 {
		rows := make([][]uint64, m)
		for c := range rows {
			rows[c] = make([]uint64, chunkKeys)
		}
		return rows
	}
	newState := func() fieldState {
		st := fieldState{seed: make([]block, chunkKeys), mask: make([]uint64, chunkKeys), val: make([][]uint64, m)}
		for c := range st.val {
			st.val[c] = make([]uint64, chunkKeys)
		}
		return st
	}
	w := &fieldWalker{
		n: n, m: m, runLen: runLen,
		state:   make([][2]fieldState, n+1),
		cw:      make([]levelCW, n),
		final:   perKey(),
		seedOut: [2][]block{make([]block, chunkKeys), make([]block, chunkKeys)},
		vals:    make([]block, m*valStride),
		valOut:  make([][]block, m),
	}
	for j := range w.valOut {
		w.valOut[j] = w.vals[j*valStride : (j+1)*valStride]
	}
	staged := make([]Fp, chunkKeys*w.runLen*m)
	w.staged = make([][]Fp, chunkKeys)
	for i := range w.staged {
		w.staged[i] = staged[i*w.runLen*m : (i+1)*w.runLen*m]
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
	newWide4(w)
	return w
}

// run writes the shares of up to chunkKeys keys at all points to out.
func (w *fieldWalker) run(keys []*FieldKey, out [][]Fp) {
	if keys, out = w.runFused(keys, out); len(keys) == 0 {
		return
	}
	w.keys, w.out, w.party = len(keys), out, uint64(keys[0].k.party)
	root := &w.state[0][0]
	for i, fk := range keys {
		root.seed[i], root.mask[i] = fk.k.seed, -uint64(fk.k.party)
		for c := range root.val {
			root.val[c][i] = 0
		}
		loadKey(w.cw, w.final, i, &fk.k)
	}
	w.walk(0, root, 0, len(w.points))
}

// hash writes the wanted children's seeds of every key's seed to
// w.seedOut and its value blocks 0 … blocks−1 to w.valOut.
func (w *fieldWalker) hash(seeds []block, need [2]bool, blocks int) {
	var out [2][]block
	for side := range need {
		if need[side] {
			out[side] = w.seedOut[side][:len(seeds)]
		}
	}
	hashNode(w.m, seeds, out[0], out[1], blocks, w.vals, valStride)
}

// word returns value word q of key i: word q%2 of value block q/2.
func (w *fieldWalker) word(i, q int) uint64 { return w.valOut[q/2][i][q%2] }

// walk visits the node at depth d whose subtree holds points[lo:hi].
func (w *fieldWalker) walk(d int, st *fieldState, lo, hi int) {
	if d == w.n {
		w.leaf(st, lo)
		return
	}
	mid := splitPoints(w.points, lo, hi, w.n-1-d)
	need := [2]bool{lo < mid, mid < hi}
	if w.fused() {
		w.node4(d, st, need)
	} else {
		w.node(d, st, need)
	}
	// Mirrored, the right child first: its leaves, the higher points,
	// are the lower rows, so that runs come in ascending rows.
	children := &w.state[d+1]
	first := 0
	if w.reverse {
		first = 1
	}
	for _, side := range [2]int{first, 1 - first} {
		if need[side] {
			w.walk(d+1, &children[side], [2]int{lo, mid}[side], [2]int{mid, hi}[side])
		}
	}
}

// node is the generic step at the inner node at depth d with state st:
// the PRG, the wanted children's seeds and values.
func (w *fieldWalker) node(d int, st *fieldState, need [2]bool) {
	seeds, mask := st.seed[:w.keys], st.mask[:w.keys]
	// Every value block is needed even for one child: a word ≥ p on the
	// left shifts the right child's values (sampleField).
	w.hash(seeds, need, w.m)
	children := &w.state[d+1]
	cw := &w.cw[d]
	for side := range need {
		if need[side] {
			childSeeds(cw, side, w.seedOut[side], mask, children[side].seed, children[side].mask)
		}
	}
	var rej uint64
	if need[0] && need[1] {
		for c := range w.m {
			rej |= addBothValues(&children[0], &children[1], st, c, w.valOut, w.m, cw.val[c][:len(mask)], mask)
		}
	} else {
		side := 0
		if need[1] {
			side = 1
		}
		for c := range w.m {
			q := side*w.m + c
			addValues(children[side].val[c][:len(mask)], st.val[c][:len(mask)], w.valOut[q/2][:len(mask)], q%2, cw.val[c][:len(mask)], mask)
		}
		rej = w.anyRejected(2 * w.m)
	}
	if rej != 0 || forceResample {
		w.resample(st, children, cw, need)
	}
}

// forceResample makes the walker take the path of a rejected PRG word at
// every node and leaf; tests set it to check that path, which a real
// stream takes with probability below 2^-32 per word.
var forceResample = false

// addValues sets dst[i] = parent[i] + v[i][h] + t_i·VCW[i] for every key i
// of the chunk: Eval's value step, reduced later, for one child.
func addValues(dst, parent []uint64, v []block, h int, vcw, mask []uint64) {
	dst, parent, v, vcw = dst[:len(mask)], parent[:len(mask)], v[:len(mask)], vcw[:len(mask)]
	h &= 1
	for i, mk := range mask {
		dst[i] = addP(addP(parent[i], vcw[i]&mk), v[i][h])
	}
}

// addBothValues is addValues of component c for both children, whose
// values are value words c and m + c of vals, and returns 1 when one of
// those words is not below p (the values are then other words: resample;
// until then the sums of a rejected word are any words).
func addBothValues(left, right, parent *fieldState, c int, vals [][]block, m int, vcw, mask []uint64) uint64 {
	n := len(mask)
	dl, dr, par, vcw := left.val[c][:n], right.val[c][:n], parent.val[c][:n], vcw[:n]
	vl, hl := vals[c/2][:n+1], c&1
	vr, hr := vals[(m+c)/2][:n+1], (m+c)&1
	done, rej := addBothAccel(dl, dr, par, vcw, mask, vl, hl, vr, hr)
	for i := done; i < n; i++ {
		base := addP(par[i], vcw[i]&mask[i])
		xl, xr := vl[i][hl], vr[i][hr]
		rej |= rejected(xl) | rejected(xr)
		dl[i] = addP(base, xl)
		dr[i] = addP(base, xr)
	}
	return rej
}

// anyRejected returns 1 when one of the first words value words of a key
// is not below p.
func (w *fieldWalker) anyRejected(words int) uint64 {
	var rej uint64
	for i := range w.keys {
		for q := range words {
			rej |= rejected(w.word(i, q))
		}
	}
	return rej
}

// resample redoes the value step of the keys whose first 2m words are not
// all below p, with their values from fieldValues.
func (w *fieldWalker) resample(st *fieldState, children *[2]fieldState, cw *levelCW, need [2]bool) {
	var vals [2 * maxFieldComponents]Fp
	for i := range w.keys {
		if !w.rejectedKey(i, 2*w.m) {
			continue
		}
		fieldValues(st.seed[i], w.m, w.m, vals[:2*w.m])
		for side := range need {
			for c := 0; c < w.m && need[side]; c++ {
				children[side].val[c][i] = addP(addP(st.val[c][i], cw.val[c][i]&st.mask[i]), uint64(vals[side*w.m+c]))
			}
		}
	}
}

// rejectedKey reports whether one of the first words value words of key i
// is not below p (always under forceResample).
func (w *fieldWalker) rejectedKey(i, words int) bool {
	var rej uint64
	for q := range words {
		rej |= rejected(w.word(i, q))
	}
	return rej != 0 || forceResample
}

// leaf stages every key's share at point p: the path value plus the leaf
// value Convert(s^(n)) and t·CW^(n+1), times (−1)^b; at the end of a run
// of leafRun leaves, or of the points, it writes the run out (flush).
func (w *fieldWalker) leaf(st *fieldState, p int) {
	slot, row, n := w.slot(p)
	w.stageLeaf(st, slot)
	if n > 0 {
		w.flush(row, n)
	}
}

// slot returns leaf p's staging slot and, if the run of staged leaves
// ends with it, the run's first row and its number of rows (else n = 0).
// Leaf p goes to row p, or its mirror N − 1 − p when reverse (N =
// len(points)), the leaves then walked from the highest point down; its
// slot is its row mod the run length, so that a run holds rows row …
// row + n − 1 in order from slot 0, from a multiple of the run length.
func (w *fieldWalker) slot(p int) (slot, row, n int) {
	last := len(w.points) - 1
	row = p
	if w.reverse {
		row = last - p
	}
	slot = row % w.runLen
	if slot == w.runLen-1 || row == last {
		return slot, row - slot, slot + 1
	}
	return slot, 0, 0
}

// flush hands every key's run of the staged shares of rows row … row +
// n − 1 to visit, or copies it to the key's output.
func (w *fieldWalker) flush(row, n int) {
	m := w.m
	for i := range w.keys {
		run := w.staged[i][:n*m]
		if w.visit != nil {
			w.visit(w.base+i, row, run)
			continue
		}
		copy(w.out[i][row*m:], run)
	}
}

// leafShares writes elements at … at+m−1 of every key's share, m =
// len(val): component c of key i is the path value val[c][i] plus the
// leaf value, word c of the key's blocks in vals, and final[c][i]·t_i,
// negated when neg is all ones (party 1). It returns 1 when one of those
// words is not below p.
func leafShares(out [][]Fp, at int, val, final [][]uint64, vals [][]block, mask []uint64, neg uint64) uint64 {
	done, rej := leafAccel(out, at, val, final, vals, mask, neg)
	for c := range val {
		v, f, words, h := val[c][:len(mask)], final[c][:len(mask)], vals[c/2][:len(mask)], c&1
		for i := done; i < len(mask); i++ {
			x := words[i][h]
			rej |= rejected(x)
			e := canonical(addP(addP(v[i], x), f[i]&mask[i]))
			out[i][at+c] = Fp(pick(neg&1, uint64(e.Neg()), uint64(e)))
		}
	}
	return rej
}

// resampleLeaf rewrites staged slot for the keys whose first m leaf
// words are not all below p, with their leaf values from fieldValues.
func (w *fieldWalker) resampleLeaf(st *fieldState, slot int) {
	var vals [maxFieldComponents]Fp
	for i := range w.keys {
		if !w.rejectedKey(i, w.m) {
			continue
		}
		fieldLeaf(st.seed[i], vals[:w.m])
		for c := range w.m {
			v := canonical(addP(addP(st.val[c][i], uint64(vals[c])), w.final[c][i]&st.mask[i]))
			w.staged[i][slot*w.m+c] = negateFieldIf(v, w.party)
		}
	}
}

// stageLeaf writes every key's share at the leaf with state st to slot
// of its staging row.
func (w *fieldWalker) stageLeaf(st *fieldState, slot int) {
	if w.fused() {
		w.leaf4(st, slot)
		return
	}
	mask := st.mask[:w.keys]
	w.hash(st.seed[:w.keys], [2]bool{}, fieldLeafBlocks(w.m))
	if leafShares(w.staged[:len(mask)], slot*w.m, st.val, w.final, w.valOut, mask, -w.party) != 0 || forceResample {
		w.resampleLeaf(st, slot)
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
