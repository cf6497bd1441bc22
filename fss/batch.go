package fss

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// chunkKeys is the number of keys one worker carries down the tree in
// lockstep: every AES call then encrypts chunkKeys independent blocks per
// fixed key, enough to keep the AES pipeline full.
const chunkKeys = 64

// SumBatch adds to acc the sum over all keys of their shares at every
// point: acc[j·m + c] += Σ_k Eval(k, points[j])[c] mod 2^64, with m the
// keys' number of components. Points must be strictly increasing and below
// 2^n; all keys must share n, m and the party bit; len(acc) must be
// len(points)·m. Full-domain evaluation is points = 0, 1, …, 2^n − 1.
//
// Each key's tree is walked once for all points, expanding each distinct
// node on the points' paths once ([BatchCost] counts them), with chunks of
// keys walked in lockstep on at most workers goroutines (GOMAXPROCS if
// workers < 1). Each worker's buffers are reused across calls (a pool
// per n, m); nothing is allocated per evaluation.
func SumBatch(keys []*Key, points []uint64, acc []uint64, workers int) error {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	_, err := sumBatch(keys, points, acc, false, workers)
	return err
}

// sumBatch is SumBatch on at most the given number of goroutines, adding
// point j to row len(points)−1−j of acc when reverse is set. It returns the
// number of AES blocks encrypted.
func sumBatch(keys []*Key, points []uint64, acc []uint64, reverse bool, workers int) (int, error) {
	if len(keys) == 0 {
		return 0, errors.New("fss: SumBatch: no keys")
	}
	first := keys[0]
	if first == nil {
		return 0, errors.New("fss: SumBatch: key 0 is nil")
	}
	for i, k := range keys {
		switch {
		case k == nil:
			return 0, fmt.Errorf("fss: SumBatch: key %d is nil", i)
		case k.nbits != first.nbits || k.m != first.m || k.party != first.party:
			return 0, fmt.Errorf("fss: SumBatch: key %d has (party, n, m) = (%d, %d, %d), key 0 has (%d, %d, %d)",
				i, k.party, k.nbits, k.m, first.party, first.nbits, first.m)
		}
	}
	if err := checkPoints(points, first.nbits); err != nil {
		return 0, fmt.Errorf("fss: SumBatch: %w", err)
	}
	if len(acc) != len(points)*first.m {
		return 0, fmt.Errorf("fss: SumBatch: len(acc) = %d, want %d points × %d components", len(acc), len(points), first.m)
	}
	if len(points) == 0 {
		return 0, nil
	}
	chunks := (len(keys) + chunkKeys - 1) / chunkKeys
	walkers := make([]*walker, max(1, min(workers, chunks)))
	var next atomic.Int64
	work := func(w *walker) {
		for c := int(next.Add(1) - 1); c < chunks; c = int(next.Add(1) - 1) {
			w.run(keys[c*chunkKeys : min((c+1)*chunkKeys, len(keys))])
		}
	}
	var wg sync.WaitGroup
	for i := range walkers {
		walkers[i] = getWalker(first.nbits, first.m, points)
		defer putWalker(walkers[i])
		if i > 0 {
			wg.Go(func() { work(walkers[i]) })
		}
	}
	work(walkers[0])
	wg.Wait()
	blocks := 0
	neg := -uint64(first.party) // the (−1)^b of Eval, applied once to the sum
	m, rows := first.m, len(points)
	for _, w := range walkers {
		blocks += w.blocks
		for j := 0; j < rows; j++ {
			dst := j
			if reverse {
				dst = rows - 1 - j
			}
			for c := 0; c < m; c++ {
				acc[dst*m+c] += negateIf(w.acc[j*m+c], neg)
			}
		}
	}
	return blocks, nil
}

// checkPoints reports whether points are strictly increasing and below 2^n.
func checkPoints(points []uint64, nbits int) error {
	for j, x := range points {
		if !inDomain(x, nbits) {
			return fmt.Errorf("point %d = %d is not below 2^%d: %w", j, x, nbits, ErrOutOfDomain)
		}
		if j > 0 && x <= points[j-1] {
			return fmt.Errorf("points not strictly increasing: point %d = %d follows %d", j, x, points[j-1])
		}
	}
	return nil
}

// splitPoints returns the first index in [lo, hi) whose point has bit
// `shift` set; the points in [lo, hi) share all higher bits, so those with
// the bit clear come first.
func splitPoints(points []uint64, lo, hi int, shift int) int {
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if points[mid]>>uint(shift)&1 == 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// BatchCost returns the number of distinct tree nodes (root and leaves
// included) on the paths of the given points in a depth-n tree, and the
// number of AES blocks SumBatch encrypts per key for them with m payload
// components: per inner node, one block per child seed needed and the
// value blocks of the children needed (m when both), per leaf ⌈m/2⌉.
func BatchCost(nbits, m int, points []uint64) (nodes, aesBlocks int, err error) {
	if nbits < 1 || nbits > maxBits || m < 1 || m > maxComponents {
		return 0, 0, fmt.Errorf("fss: BatchCost: n = %d, m = %d out of range", nbits, m)
	}
	if err := checkPoints(points, nbits); err != nil {
		return 0, 0, fmt.Errorf("fss: BatchCost: %w", err)
	}
	if len(points) == 0 {
		return 0, 0, nil
	}
	nodes, aesBlocks = batchCost(nbits, m, points, 0, 0, len(points))
	return nodes, aesBlocks, nil
}

func batchCost(n, m int, points []uint64, d, lo, hi int) (nodes, blocks int) {
	if d == n {
		return 1, (m + 1) / 2
	}
	mid := splitPoints(points, lo, hi, n-1-d)
	first, last := valueBlockRange(m, lo < mid, mid < hi)
	nodes, blocks = 1, last-first+1
	if lo < mid {
		cn, cb := batchCost(n, m, points, d+1, lo, mid)
		nodes, blocks = nodes+cn, blocks+cb+1
	}
	if mid < hi {
		cn, cb := batchCost(n, m, points, d+1, mid, hi)
		nodes, blocks = nodes+cn, blocks+cb+1
	}
	return nodes, blocks
}

// nodeState is the state of one tree node for every key of a chunk. Since
// only the sum over keys is wanted, the value words are not carried per
// key: val[c] is V_c summed over the chunk's keys on the path from the
// root (unsigned; the (−1)^b of Eval is applied once to the final sums).
type nodeState struct {
	seed []block  // per key: the node's seed
	mask []uint64 // per key: the control bit t as a mask, 0 or all ones
	val  []uint64 // per component c: Σ_keys V_c
}

// levelCW holds the correction words of one depth for every key of a
// chunk. sCW_lo has a zero low bit, so storing sCW_lo | tCW_side in seedLo
// makes applying the seed correction also apply the control-bit one.
type levelCW struct {
	seedLo [2][]uint64 // per side, per key: sCW_lo | tCW_side
	seedHi []uint64    // per key: sCW_hi
	val    [][]uint64  // per component, per key: VCW_c
}

// walker evaluates chunks of keys at a sorted list of points by a
// depth-first walk of the tree, accumulating unsigned sums per point. Its
// buffers are allocated once per shape (n, m) and reused from a pool, so
// the walk allocates nothing.
type walker struct {
	n, m   int
	points []uint64
	acc    []uint64 // unsigned sums, len(points)·m
	keys   int      // keys in the current chunk
	// state[0][0] is the root; state[d][side] the child states at depth d.
	state [][2]nodeState
	cw    []levelCW  // per depth
	final [][]uint64 // per component, per key: CW^(n+1)_c
	// Scratch of one node: the PRG's child seeds per side and key, the
	// sums over keys of the value blocks, Σ_keys t·VCW_c.
	seedOut [2][]block
	valSum  []block
	cwSum   []uint64
	// blocks counts the AES blocks encrypted.
	blocks int
}

// walkerPools holds idle walkers per shape [2]int{n, m}, so that repeated
// queries reuse their buffers.
var walkerPools sync.Map

// poolOf returns the sync.Pool stored under key in pools, storing a new
// one when there is none. It loads first, so that only the first calls
// for a key allocate a pool, not every call.
func poolOf(pools *sync.Map, key any) *sync.Pool {
	if pool, ok := pools.Load(key); ok {
		return pool.(*sync.Pool)
	}
	pool, _ := pools.LoadOrStore(key, new(sync.Pool))
	return pool.(*sync.Pool)
}

// getWalker returns a walker for keys of shape (n, m) at the points, with
// a zero accumulator.
func getWalker(n, m int, points []uint64) *walker {
	w, _ := poolOf(&walkerPools, [2]int{n, m}).Get().(*walker)
	if w == nil {
		w = newWalker(n, m)
	}
	w.points, w.blocks = points, 0
	if size := len(points) * m; cap(w.acc) >= size {
		w.acc = w.acc[:size]
		clear(w.acc)
	} else {
		w.acc = make([]uint64, size)
	}
	return w
}

// putWalker returns w to its pool, without its references to the caller's
// points.
func putWalker(w *walker) {
	w.points = nil
	poolOf(&walkerPools, [2]int{w.n, w.m}).Put(w)
}

func newWalker(n, m int) *walker {
	// All per-key buffers are cut from two slabs, one allocation each.
	states := 1 + 2*n
	blocks := make([]block, (states+2)*chunkKeys+m)
	words := make([]uint64, states*(chunkKeys+m)+(n*(3+m)+m)*chunkKeys+m)
	takeBlocks := func(k int) []block {
		b := blocks[:k:k]
		blocks = blocks[k:]
		return b
	}
	take := func(k int) []uint64 {
		w := words[:k:k]
		words = words[k:]
		return w
	}
	perKey := func() [][]uint64 {
		rows := make([][]uint64, m)
		for c := range rows {
			rows[c] = take(chunkKeys)
		}
		return rows
	}
	newState := func() nodeState {
		return nodeState{seed: takeBlocks(chunkKeys), mask: take(chunkKeys), val: take(m)}
	}
	w := &walker{
		n: n, m: m,
		state:   make([][2]nodeState, n+1),
		cw:      make([]levelCW, n),
		final:   perKey(),
		seedOut: [2][]block{takeBlocks(chunkKeys), takeBlocks(chunkKeys)},
		valSum:  takeBlocks(m),
		cwSum:   take(m),
	}
	w.state[0][0] = newState()
	for d := 1; d <= n; d++ {
		w.state[d] = [2]nodeState{newState(), newState()}
	}
	for d := range w.cw {
		w.cw[d] = levelCW{
			seedLo: [2][]uint64{take(chunkKeys), take(chunkKeys)},
			seedHi: take(chunkKeys),
			val:    perKey(),
		}
	}
	return w
}

// run adds the unsigned sums of up to chunkKeys keys at all points.
func (w *walker) run(keys []*Key) {
	w.keys = len(keys)
	root := &w.state[0][0]
	clear(root.val)
	for i, key := range keys {
		root.seed[i], root.mask[i] = key.seed, -uint64(key.party)
		loadKey(w.cw, w.final, i, key)
	}
	w.walk(0, root, 0, len(w.points))
}

// loadKey writes key's correction words to slot i of the per-level cw and
// of final, the layout both walkers read.
func loadKey(cws []levelCW, final [][]uint64, i int, key *Key) {
	for d := range cws {
		cw := key.cw[d*key.stride() : (d+1)*key.stride()]
		lvl := &cws[d]
		lvl.seedLo[0][i] = cw[0] | key.tcw[0]>>uint(d)&1
		lvl.seedLo[1][i] = cw[0] | key.tcw[1]>>uint(d)&1
		lvl.seedHi[i] = cw[1]
		for c, v := range cw[2:] {
			lvl.val[c][i] = v
		}
	}
	for c, v := range key.final {
		final[c][i] = v
	}
}

// walk visits the node at depth d whose subtree holds points[lo:hi]; st
// is its state.
func (w *walker) walk(d int, st *nodeState, lo, hi int) {
	if d == w.n {
		w.leaf(st, lo)
		return
	}
	m, seeds := w.m, st.seed[:w.keys]
	mid := splitPoints(w.points, lo, hi, w.n-1-d)
	need := [2]bool{lo < mid, mid < hi}
	vFirst, vLast := valueBlockRange(m, need[0], need[1])
	valSum := w.valSum[:vLast-vFirst+1]
	clear(valSum)
	var out [2][]block
	for side := range need {
		if need[side] {
			out[side] = w.seedOut[side][:w.keys]
			w.blocks += w.keys
		}
	}
	prgNode(m, seeds, out[0], out[1], vFirst, valSum)
	w.blocks += len(valSum) * w.keys
	mask := st.mask[:w.keys]
	for c, vcw := range w.cw[d].val {
		w.cwSum[c] = maskedSum(vcw, mask)
	}
	// Both children are expanded before descending: the walk reuses the
	// scratch.
	children := &w.state[d+1]
	for side := range need {
		if need[side] {
			w.expand(d, st, &children[side], side, vFirst)
		}
	}
	if need[0] {
		w.walk(d+1, &children[0], lo, mid)
	}
	if need[1] {
		w.walk(d+1, &children[1], mid, hi)
	}
}

// maskedSum returns Σ_i add[i] & mask[i] over the chunk's keys.
func maskedSum(add, mask []uint64) uint64 {
	add = add[:len(mask)]
	sum, done := maskedSumAccel(add, mask)
	for i := done; i < len(mask); i++ {
		sum += add[i] & mask[i]
	}
	return sum
}

// expand writes to child the state of child side of the node with state
// parent, from the PRG's child seeds, the value-block sums from block
// vFirst on and Σ t·VCW: Eval's loop body, for every key.
func (w *walker) expand(d int, parent, child *nodeState, side, vFirst int) {
	mask := parent.mask[:w.keys]
	childSeeds(&w.cw[d], side, w.seedOut[side], mask, child.seed, child.mask)
	for c := range child.val {
		word := side*w.m + c - 2*vFirst // value word side·m + c, in block word/2 − vFirst
		child.val[c] = parent.val[c] + w.valSum[word>>1][word&1] + w.cwSum[c]
	}
}

// childSeeds writes each key's seed and control-bit mask of child side
// from the PRG's child seed blocks out and the level's corrections cw,
// applied where the parent's mask is set: Eval's seed step, per key.
func childSeeds(cw *levelCW, side int, out []block, mask []uint64, cSeed []block, cMask []uint64) {
	out, cSeed, cMask = out[:len(mask)], cSeed[:len(mask)], cMask[:len(mask)]
	cwLo, cwHi := cw.seedLo[side][:len(mask)], cw.seedHi[:len(mask)]
	for i := expandAccel(out, cwLo, cwHi, mask, cSeed, cMask); i < len(mask); i++ {
		mk := mask[i]
		lo := out[i][0] ^ cwLo[i]&mk
		cSeed[i] = block{lo &^ 1, out[i][1] ^ cwHi[i]&mk}
		cMask[i] = -(lo & 1)
	}
}

// leaf adds the unsigned leaf values of every key to the row of point p.
func (w *walker) leaf(st *nodeState, p int) {
	leafSum := w.valSum[:(w.m+1)/2]
	clear(leafSum)
	prgNode(w.m, st.seed[:w.keys], nil, nil, 0, leafSum)
	w.blocks += len(leafSum) * w.keys
	mask := st.mask[:w.keys]
	row := w.acc[p*w.m : (p+1)*w.m]
	for c := range row {
		row[c] += st.val[c] + leafSum[c>>1][c&1] + maskedSum(w.final[c], mask)
	}
}

// negateIf returns −x when mask is all ones and x when it is zero.
func negateIf(x, mask uint64) uint64 {
	return (x ^ mask) - mask
}
