package fss

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"sync"
)

// block is one 128-bit PRG block as two little-endian 64-bit words:
// block[0] holds bytes 0–7 (the low word, whose least significant bit is
// the control bit of a seed), block[1] bytes 8–15.
type block = [2]uint64

// The PRG with m payload components uses m + 2 fixed public AES-128 keys,
// in this order so that every set of outputs evaluated together is a
// contiguous run of keys:
//
//	key 0        the left child seed,
//	key 1+j      value block j < m: words 2j and 2j+1 of the 2m value words
//	             (words 0…m−1 for the left child, m…2m−1 for the right),
//	key 1+m      the right child seed.
//
// The left child alone needs keys 0…⌈m/2⌉, the right child alone keys
// 1+⌊m/2⌋…1+m, the leaf value (left value words) keys 1…⌈m/2⌉.
const prgKeys = maxComponents + 2

// rightSeedKey is the index of the key of the right child seed.
func rightSeedKey(m int) int { return 1 + m }

// fixedKeys are the public AES-128 keys, SHA-256("fedecdf/fss PRG key " ‖ i)
// truncated to 16 bytes: nothing-up-my-sleeve constants.
var fixedKeys [prgKeys][16]byte

// fixedCiphers are the standard library's AES for the fixed keys, used by
// the portable MMO path and by tests that check the accelerated path.
var fixedCiphers [prgKeys]cipher.Block

func init() {
	for i := range fixedKeys {
		sum := sha256.Sum256([]byte("fedecdf/fss PRG key " + strconv.Itoa(i)))
		copy(fixedKeys[i][:], sum[:16])
		c, err := aes.NewCipher(fixedKeys[i][:])
		if err != nil {
			panic(err) // unreachable: the key length is 16
		}
		fixedCiphers[i] = c
	}
	initAccel()
}

// sigma is the linear orthomorphism of Guo, Katz, Wang and Yu (2020),
// σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi.
func sigma(x block) block {
	return block{x[1], x[0] ^ x[1]}
}

// blockBuffers recycles the buffers of hashPortable: a buffer passed to
// cipher.Block.Encrypt escapes, and the evaluators must not allocate per
// evaluation.
var blockBuffers = sync.Pool{New: func() any { return new([16]byte) }}

// hashPortable is the MMO hash with the σ permutation,
// H_k(x) = AES_k(σ(x)) ⊕ σ(x), under fixed key k, on the standard
// library's constant-time AES, with buf as scratch.
func hashPortable(k int, x block, buf *[16]byte) block {
	x = sigma(x)
	binary.LittleEndian.PutUint64(buf[0:8], x[0])
	binary.LittleEndian.PutUint64(buf[8:16], x[1])
	fixedCiphers[k].Encrypt(buf[:], buf[:])
	return block{binary.LittleEndian.Uint64(buf[0:8]) ^ x[0], binary.LittleEndian.Uint64(buf[8:16]) ^ x[1]}
}

// prgNode expands the seeds of one tree node, one seed per key, with the
// PRG of m components: when non-nil, left[i] and right[i] receive the
// left and right child seed blocks H_0(seeds[i]) and H_{1+m}(seeds[i])
// (control bit not yet split off), and sums[j] += Σ_i H_{1+valueFirst+j}(seeds[i])
// componentwise mod 2^64 for every j < len(sums): the value blocks are
// needed only summed over keys, so they are never stored. With one seed
// the sums are that seed's value blocks.
func prgNode(m int, seeds, left, right []block, valueFirst int, sums []block) {
	if len(seeds) == 0 {
		return
	}
	_ = fixedCiphers[1+valueFirst+len(sums)-1]
	_ = fixedCiphers[rightSeedKey(m)]
	if left != nil {
		_ = left[len(seeds)-1]
	}
	if right != nil {
		_ = right[len(seeds)-1]
	}
	if prgNodeAccel(m, seeds, left, right, valueFirst, sums) {
		return
	}
	prgNodePortable(m, seeds, left, right, valueFirst, sums)
}

// prgNodePortable is prgNode on the standard library's AES alone.
func prgNodePortable(m int, seeds, left, right []block, valueFirst int, sums []block) {
	buf := blockBuffers.Get().(*[16]byte)
	defer blockBuffers.Put(buf)
	for i, s := range seeds {
		if left != nil {
			left[i] = hashPortable(0, s, buf)
		}
		if right != nil {
			right[i] = hashPortable(rightSeedKey(m), s, buf)
		}
		for j := range sums {
			h := hashPortable(1+valueFirst+j, s, buf)
			sums[j][0] += h[0]
			sums[j][1] += h[1]
		}
	}
}

// splitSeed splits a child seed block into the seed, with its least
// significant bit cleared, and the control bit, that bit.
func splitSeed(b block) (block, uint64) {
	return block{b[0] &^ 1, b[1]}, b[0] & 1
}

// expandNode is G of BCG+21 on the node with seed s: both children's
// seeds and control bits, and their value words v[0] (left) and v[1]
// (right), m words each.
func expandNode(s block, m int, v [2][]uint64) (seeds [2]block, t [2]uint64) {
	var out [2][1]block
	var sums [maxComponents]block
	prgNode(m, []block{s}, out[0][:], out[1][:], 0, sums[:m])
	for side := range out {
		seeds[side], t[side] = splitSeed(out[side][0])
	}
	for word := 0; word < 2*m; word++ {
		v[word/m][word%m] = sums[word/2][word%2]
	}
	return seeds, t
}

// expandChild is G of BCG+21 on the node with seed s restricted to child
// side (0 left, 1 right): that child's seed and control bit, and its m
// value words in v (Convert(v^side)).
func expandChild(s block, side, m int, v []uint64) (block, uint64) {
	var out [1]block
	expandSide(s, side, m, v, out[:])
	return splitSeed(out[0])
}

// valueWords writes to v the m value words of child side (0 left, 1 right)
// of the node with seed s. The leaf value Convert(s^(n)) is
// valueWords(s^(n), 0, m, v).
func valueWords(s block, side, m int, v []uint64) {
	expandSide(s, side, m, v, nil)
}

// expandSide writes to v the m value words of child side of the node with
// seed s and, when out is non-nil, that child's seed block to out[0].
func expandSide(s block, side, m int, v []uint64, out []block) {
	first, last := valueBlockRange(m, side == 0, side == 1)
	var sums [maxComponents/2 + 1]block
	left, right := out, []block(nil)
	if side == 1 {
		left, right = nil, out
	}
	prgNode(m, []block{s}, left, right, first, sums[:last-first+1])
	for i := range v {
		word := side*m + i - 2*first
		v[i] = sums[word/2][word%2]
	}
}

// valueBlockRange returns the inclusive range of value blocks that hold
// the value words of the left child (needL), the right child (needR) or
// both.
func valueBlockRange(m int, needL, needR bool) (first, last int) {
	first, last = 0, m-1
	if !needL {
		first = m / 2
	}
	if !needR {
		last = (m - 1) / 2
	}
	return first, last
}

// hashEach writes H_{ka}(seeds[i]) to a[i] for every seed and, when b is
// non-nil, H_{kb}(seeds[i]) to b[i]: per-seed outputs under two fixed keys,
// eight seeds in flight on AES-NI, sixteen on VAES. The field DCF needs its
// value blocks per key (their reduction mod p does not commute with sums
// mod 2^64).
func hashEach(ka, kb int, seeds, a, b []block) {
	if len(seeds) == 0 {
		return
	}
	_, _ = fixedCiphers[ka], a[len(seeds)-1]
	if b != nil {
		_, _ = fixedCiphers[kb], b[len(seeds)-1]
	}
	if hashEachAccel(ka, kb, seeds, a, b) {
		return
	}
	buf := blockBuffers.Get().(*[16]byte)
	defer blockBuffers.Put(buf)
	for i, s := range seeds {
		a[i] = hashPortable(ka, s, buf)
		if b != nil {
			b[i] = hashPortable(kb, s, buf)
		}
	}
}

// hashNode is the field walker's PRG on one node of every key: for each
// seed i, the left child seed H_0(seeds[i]) to left[i] and the right one
// H_{1+m}(seeds[i]) to right[i] when they are non-nil, and value blocks
// j < values, H_{1+j}(seeds[i]), to vals[j·stride + i]; on AES-NI in one
// pass over the seeds.
func hashNode(m int, seeds, left, right []block, values int, vals []block, stride int) {
	if len(seeds) == 0 {
		return
	}
	if values > 0 {
		_ = vals[(values-1)*stride+len(seeds)-1]
	}
	if left != nil {
		_ = left[len(seeds)-1]
	}
	if right != nil {
		_ = right[len(seeds)-1]
	}
	if hashNodeAccel(m, seeds, left, right, values, vals, stride) {
		return
	}
	if left != nil {
		hashEach(0, 0, seeds, left, nil)
	}
	if right != nil {
		hashEach(rightSeedKey(m), 0, seeds, right, nil)
	}
	for j := range values {
		hashEach(1+j, 0, seeds, vals[j*stride:j*stride+len(seeds)], nil)
	}
}
