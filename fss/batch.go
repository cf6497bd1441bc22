package fss

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// chunkKeys is the number of keys one worker carries down the tree in
// lockstep: every AES call then encrypts chunkKeys independent blocks
// under one fixed key, enough to keep the AES pipeline full.
const chunkKeys = 32

// SumBatch adds to acc the sum over all keys of their shares at every
// point: acc[j·m + c] += Σ_k Eval(k, points[j])[c] mod 2^64, with m the
// keys' number of components. Points must be strictly increasing and below
// 2^n; all keys must share n, m and the party bit; len(acc) must be
// len(points)·m. Full-domain evaluation is points = 0, 1, …, 2^n − 1.
//
// Each key's tree is walked once for all points, expanding each distinct
// node on the points' paths once (BatchCost counts them), with chunks of
// keys walked in lockstep on GOMAXPROCS goroutines. Memory is allocated
// per call and per worker, never per evaluation.
func SumBatch(keys []*Key, points []uint64, acc []uint64) error {
	_, err := sumBatch(keys, points, acc, false)
	return err
}

// sumBatch is SumBatch, adding point j to row len(points)−1−j of acc when
// reverse is set. It returns the number of AES blocks encrypted.
func sumBatch(keys []*Key, points []uint64, acc []uint64, reverse bool) (int, error) {
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
	walkers := make([]*walker, min(runtime.GOMAXPROCS(0), chunks))
	var next atomic.Int64
	work := func(w *walker) {
		for c := int(next.Add(1) - 1); c < chunks; c = int(next.Add(1) - 1) {
			w.run(keys[c*chunkKeys : min((c+1)*chunkKeys, len(keys))])
		}
	}
	var wg sync.WaitGroup
	for i := range walkers {
		walkers[i] = newWalker(first.nbits, first.m, points)
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
				acc[dst*m+c] += w.acc[j*m+c] ^ neg - neg
			}
		}
	}
	return blocks, nil
}

// checkPoints reports whether points are strictly increasing and below 2^n.
func checkPoints(points []uint64, nbits int) error {
	for j, x := range points {
		if !inDomain(x, nbits) {
			return fmt.Errorf("point %d = %d is not below 2^%d", j, x, nbits)
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
	if nbits < 1 || nbits > MaxBits || m < 1 || m > MaxComponents {
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

// nodeStates holds the evaluation state of one tree node for each key of
// a chunk: seed (two words per key), control bit t and the unsigned value
// sum V (m words per key) accumulated on the path from the root.
type nodeStates struct {
	seed, t, v []uint64
}

func newNodeStates(m int) nodeStates {
	return nodeStates{
		seed: make([]uint64, 2*chunkKeys),
		t:    make([]uint64, chunkKeys),
		v:    make([]uint64, m*chunkKeys),
	}
}

// walker evaluates chunks of keys at a sorted list of points by a
// depth-first walk of the tree, accumulating unsigned sums per point.
type walker struct {
	n, m   int
	points []uint64
	keys   []*Key
	acc    []uint64        // unsigned sums, len(points)·m
	root   nodeStates      // level 0
	levels [][2]nodeStates // levels[d][side]: children states at level d
	// seedOut[side] receives the child seeds from the PRG; vals receives
	// value block j of key i at words j·2·chunkKeys + 2i, +1.
	seedOut [2][]uint64
	vals    []uint64
	blocks  int
}

func newWalker(n, m int, points []uint64) *walker {
	w := &walker{
		n: n, m: m, points: points,
		acc:     make([]uint64, len(points)*m),
		root:    newNodeStates(m),
		levels:  make([][2]nodeStates, n+1),
		seedOut: [2][]uint64{make([]uint64, 2*chunkKeys), make([]uint64, 2*chunkKeys)},
		vals:    make([]uint64, 2*chunkKeys*m),
	}
	for d := 1; d <= n; d++ {
		w.levels[d] = [2]nodeStates{newNodeStates(m), newNodeStates(m)}
	}
	return w
}

// run adds the unsigned sums of up to chunkKeys keys at all points.
func (w *walker) run(keys []*Key) {
	w.keys = keys
	for i, k := range keys {
		w.root.seed[2*i], w.root.seed[2*i+1] = k.seed[0], k.seed[1]
		w.root.t[i] = uint64(k.party)
	}
	clear(w.root.v)
	w.walk(0, &w.root, 0, len(w.points))
}

// walk visits the node at depth d whose subtree holds points[lo:hi].
func (w *walker) walk(d int, st *nodeStates, lo, hi int) {
	if d == w.n {
		w.leaf(st, lo)
		return
	}
	k2 := 2 * len(w.keys)
	seeds := st.seed[:k2]
	mid := splitPoints(w.points, lo, hi, w.n-1-d)
	need := [2]bool{lo < mid, mid < hi}
	first, last := valueBlockRange(w.m, need[0], need[1])
	for j := first; j <= last; j++ {
		mmo(prgValue+j, w.vals[j*2*chunkKeys:j*2*chunkKeys+k2], seeds)
	}
	w.blocks += (last - first + 1) * len(w.keys)
	for side := range need {
		if need[side] {
			mmo(prgLeft+side, w.seedOut[side][:k2], seeds)
			w.blocks += len(w.keys)
			w.expand(d, st, &w.levels[d+1][side], side)
		}
	}
	if need[0] {
		w.walk(d+1, &w.levels[d+1][0], lo, mid)
	}
	if need[1] {
		w.walk(d+1, &w.levels[d+1][1], mid, hi)
	}
}

// expand fills child with the states of child side of st for every key,
// from the PRG outputs in seedOut[side] and vals (Eval's loop body).
func (w *walker) expand(d int, st, child *nodeStates, side int) {
	m, stride := w.m, 2+w.m
	out := w.seedOut[side]
	for i, key := range w.keys {
		t := st.t[i]
		mask := -t
		cw := key.cw[d*stride : (d+1)*stride]
		lo := out[2*i] ^ cw[0]&mask
		child.seed[2*i] = lo &^ 1
		child.seed[2*i+1] = out[2*i+1] ^ cw[1]&mask
		child.t[i] = lo&1 ^ t&(key.tcw[side]>>uint(d))&1
		pv, cv := st.v[i*m:(i+1)*m], child.v[i*m:(i+1)*m]
		for c := range cv {
			word := side*m + c
			cv[c] = pv[c] + w.vals[(word>>1)*2*chunkKeys+2*i+word&1] + cw[2+c]&mask
		}
	}
}

// leaf adds the unsigned leaf values of every key to the row of point p.
func (w *walker) leaf(st *nodeStates, p int) {
	m, k2 := w.m, 2*len(w.keys)
	for j := 0; j < (m+1)/2; j++ {
		mmo(prgValue+j, w.vals[j*2*chunkKeys:j*2*chunkKeys+k2], st.seed[:k2])
	}
	w.blocks += (m + 1) / 2 * len(w.keys)
	row := w.acc[p*m : (p+1)*m]
	for i, key := range w.keys {
		mask := -st.t[i]
		v := st.v[i*m : (i+1)*m]
		for c := range row {
			row[c] += v[c] + w.vals[(c>>1)*2*chunkKeys+2*i+c&1] + key.final[c]&mask
		}
	}
}
