package fss

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
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
const prgKeys = MaxComponents + 2

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

// prgExpand computes the MMO hash with the σ permutation,
// H_k(x) = AES_k(σ(x)) ⊕ σ(x), of the seeds src under nk consecutive fixed
// keys first, …, first+nk−1: H_{first+j}(src[i]) goes to dst[j·len(src)+i].
func prgExpand(first, nk int, dst, src []block) {
	if len(src) == 0 || nk == 0 {
		return
	}
	_ = dst[nk*len(src)-1]
	_ = fixedCiphers[first+nk-1]
	if prgExpandAccel(first, nk, dst, src) {
		return
	}
	prgExpandPortable(first, nk, dst, src)
}

// prgExpandPortable is prgExpand on the standard library's constant-time
// AES, one block per call.
func prgExpandPortable(first, nk int, dst, src []block) {
	var buf [16]byte
	for i, seed := range src {
		x := sigma(seed)
		for j := 0; j < nk; j++ {
			binary.LittleEndian.PutUint64(buf[0:8], x[0])
			binary.LittleEndian.PutUint64(buf[8:16], x[1])
			fixedCiphers[first+j].Encrypt(buf[:], buf[:])
			dst[j*len(src)+i] = block{binary.LittleEndian.Uint64(buf[0:8]) ^ x[0], binary.LittleEndian.Uint64(buf[8:16]) ^ x[1]}
		}
	}
}

// prgSum adds to sums[j], for j < len(sums), the sum over the seeds src of
// H_{first+j}(seed), componentwise mod 2^64: the batch evaluator needs
// only the sum over keys of their value words, so they are never stored.
func prgSum(first int, sums, src []block) {
	if len(src) == 0 || len(sums) == 0 {
		return
	}
	_ = fixedCiphers[first+len(sums)-1]
	if prgSumAccel(first, sums, src) {
		return
	}
	var out [1]block
	for j := range sums {
		for _, seed := range src {
			prgExpandPortable(first+j, 1, out[:], []block{seed})
			sums[j][0] += out[0][0]
			sums[j][1] += out[0][1]
		}
	}
}

// childSeed returns the seed and control bit of child side (0 left, 1
// right) of the node with seed s in the PRG with m components: the control
// bit is the least significant bit of the PRG block, cleared in the
// returned seed.
func childSeed(s block, side, m int) (block, uint64) {
	k := 0
	if side == 1 {
		k = rightSeedKey(m)
	}
	var out [1]block
	prgExpand(k, 1, out[:], []block{s})
	t := out[0][0] & 1
	out[0][0] &^= 1
	return out[0], t
}

// expandNode is G of BCG+21 on the node with seed s: both children's
// seeds and control bits, and their value words v[0] (left) and v[1]
// (right), m words each, from one expansion under all m + 2 keys.
func expandNode(s block, m int, v [2][]uint64) (seeds [2]block, t [2]uint64) {
	var out [MaxComponents + 2]block
	prgExpand(0, m+2, out[:m+2], []block{s})
	for side, b := range [2]block{out[0], out[rightSeedKey(m)]} {
		t[side] = b[0] & 1
		b[0] &^= 1
		seeds[side] = b
	}
	for word := 0; word < 2*m; word++ {
		v[word/m][word%m] = out[1+word/2][word%2]
	}
	return seeds, t
}

// valueWords writes to v the m value words of child side (0 left, 1 right)
// of the node with seed s (Convert(v^side) in the notation of BCG+21).
// The leaf value Convert(s^(n)) is valueWords(s^(n), 0, m, v).
func valueWords(s block, side, m int, v []uint64) {
	first, last := valueBlockRange(m, side == 0, side == 1)
	var out [MaxComponents/2 + 1]block
	prgExpand(1+first, last-first+1, out[:], []block{s})
	for i := range v {
		word := side*m + i - 2*first
		v[i] = out[word/2][word%2]
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
