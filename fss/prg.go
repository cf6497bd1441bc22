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

// Indices of the fixed public AES-128 keys of the PRG. Key prgLeft yields
// the left child seed, prgRight the right child seed, and prgValue+j the
// j-th block of value material (words 2j and 2j+1 of the 2m value words:
// words 0…m−1 for the left child, m…2m−1 for the right child).
const (
	prgLeft  = 0
	prgRight = 1
	prgValue = 2
	prgKeys  = prgValue + MaxComponents
)

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

// mmo writes to dst the Matyas–Meyer–Oseas hash with the σ permutation,
// H_k(x) = AES_k(σ(x)) ⊕ σ(x), of every block of src under fixed key k.
// src and dst hold len(src)/2 blocks; dst may be src.
func mmo(k int, dst, src []uint64) {
	if len(src) == 0 {
		return
	}
	if mmoAccel(k, dst, src) {
		return
	}
	mmoPortable(k, dst, src)
}

// mmoPortable is mmo on the standard library's constant-time AES, one
// block per call.
func mmoPortable(k int, dst, src []uint64) {
	var buf [16]byte
	c := fixedCiphers[k]
	for i := 0; i+1 < len(src); i += 2 {
		x := sigma(block{src[i], src[i+1]})
		binary.LittleEndian.PutUint64(buf[0:8], x[0])
		binary.LittleEndian.PutUint64(buf[8:16], x[1])
		c.Encrypt(buf[:], buf[:])
		dst[i] = binary.LittleEndian.Uint64(buf[0:8]) ^ x[0]
		dst[i+1] = binary.LittleEndian.Uint64(buf[8:16]) ^ x[1]
	}
}

// childSeed returns the seed and control bit of child side (0 left, 1
// right) of the node with seed s: the control bit is the least
// significant bit of the PRG block, cleared in the returned seed.
func childSeed(s block, side int) (block, uint64) {
	var out block
	mmo(prgLeft+side, out[:], s[:])
	t := out[0] & 1
	out[0] &^= 1
	return out, t
}

// valueWords writes to v the m value words of child side (0 left, 1 right)
// of the node with seed s (Convert(v^side) in the notation of BCG+21).
// The leaf value Convert(s^(n)) is valueWords(s^(n), 0, m, v).
func valueWords(s block, side, m int, v []uint64) {
	first := side * m
	var out block
	for j := first / 2; j <= (first+m-1)/2; j++ {
		mmo(prgValue+j, out[:], s[:])
		for w := range out {
			if i := 2*j + w - first; i >= 0 && i < m {
				v[i] = out[w]
			}
		}
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
