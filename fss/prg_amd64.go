//go:build amd64 && !purego

package fss

// AES-NI path. The standard library exposes pipelined AES only as CTR and
// GCM keystreams, which encrypt counters, not the arbitrary inputs σ(s) the
// fixed-key PRG needs; crypto/aes's Block.Encrypt runs one block per call.
// mmoBlocksAsm encrypts eight independent blocks in flight with AESENC,
// as the standard library's own CTR assembly does, so the PRG runs at the
// CTR keystream's speed. AESENC is constant time and the keys are public.

// roundKeys are the AES-128 key schedules of fixedKeys, 11 round keys of
// 16 bytes each, in the byte order AESENC expects.
var roundKeys [prgKeys][176]byte

var useAESNI bool

//go:noescape
func mmoBlocksAsm(rk *[176]byte, dst, src *uint64, n int)

func hasAESNI() bool

func initAccel() {
	useAESNI = hasAESNI()
	for i := range fixedKeys {
		roundKeys[i] = expandKey128(fixedKeys[i])
	}
}

func mmoAccel(k int, dst, src []uint64) bool {
	if !useAESNI {
		return false
	}
	n := len(src) / 2
	_ = dst[2*n-1]
	mmoBlocksAsm(&roundKeys[k], &dst[0], &src[0], n)
	return true
}
