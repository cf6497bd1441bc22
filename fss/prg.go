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
// H_k(x) = AES_k(σ(x)) ⊕ σ(x), of n seeds under nk consecutive fixed keys
// first, …, first+nk−1: seed i is src[i·stride], src[i·stride+1], and
// H_{first+j}(seed i) goes to dst[2(j·n+i)], dst[2(j·n+i)+1].
func prgExpand(first, nk int, dst, src []uint64, stride, n int) {
	if n == 0 || nk == 0 {
		return
	}
	_ = src[(n-1)*stride+1]
	_ = dst[2*n*nk-1]
	_ = fixedCiphers[first+nk-1]
	if prgExpandAccel(first, nk, dst, src, stride, n) {
		return
	}
	prgExpandPortable(first, nk, dst, src, stride, n)
}

// prgExpandPortable is prgExpand on the standard library's constant-time
// AES, one block per call.
func prgExpandPortable(first, nk int, dst, src []uint64, stride, n int) {
	var buf [16]byte
	for i := 0; i < n; i++ {
		x := sigma(block{src[i*stride], src[i*stride+1]})
		for j := 0; j < nk; j++ {
			binary.LittleEndian.PutUint64(buf[0:8], x[0])
			binary.LittleEndian.PutUint64(buf[8:16], x[1])
			fixedCiphers[first+j].Encrypt(buf[:], buf[:])
			o := 2 * (j*n + i)
			dst[o] = binary.LittleEndian.Uint64(buf[0:8]) ^ x[0]
			dst[o+1] = binary.LittleEndian.Uint64(buf[8:16]) ^ x[1]
		}
	}
}

// mmo writes to dst the hash H_k of every block of src (len(src)/2
// blocks) under fixed key k.
func mmo(k int, dst, src []uint64) {
	prgExpand(k, 1, dst, src, 2, len(src)/2)
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
	var out block
	mmo(k, out[:], s[:])
	t := out[0] & 1
	out[0] &^= 1
	return out, t
}

// valueWords writes to v the m value words of child side (0 left, 1 right)
// of the node with seed s (Convert(v^side) in the notation of BCG+21).
// The leaf value Convert(s^(n)) is valueWords(s^(n), 0, m, v).
func valueWords(s block, side, m int, v []uint64) {
	first, last := valueBlockRange(m, side == 0, side == 1)
	var buf [MaxComponents + 2]uint64
	out := buf[:2*(last-first+1)]
	prgExpand(1+first, last-first+1, out, s[:], 2, 1)
	copy(v, out[side*m-2*first:])
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
