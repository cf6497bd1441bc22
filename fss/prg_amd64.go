//go:build amd64 && !purego

package fss

// AES-NI path. The standard library pipelines AES only in its CTR and GCM
// keystreams, which encrypt counters, not the arbitrary inputs σ(s) the
// fixed-key PRG needs, and crypto/aes's Block.Encrypt runs one block per
// call. prgExpandAsm keeps eight independent blocks in flight through
// AESENC, as the standard library's own CTR assembly does, so the PRG runs
// at the CTR keystream's speed. AESENC is constant time and the keys are
// public.

// roundKeys are the AES-128 key schedules of fixedKeys, 11 round keys of
// 16 bytes each, in the byte order AESENC expects.
var roundKeys [prgKeys][176]byte

var useAESNI bool

// prgExpandAsm is prgExpand on n seeds, with a scratch buffer for the σ
// of eight seeds.
//
//go:noescape
func prgExpandAsm(rk *[176]byte, nk int, dst, src *block, n int, scratch *[8]block)

// prgSumAsm is prgSum on n seeds, with a scratch buffer for the σ of
// eight seeds.
//
//go:noescape
func prgSumAsm(rk *[176]byte, nk int, dst, src *block, n int, scratch *[8]block)

func hasAESNI() bool

func initAccel() {
	useAESNI = hasAESNI()
	for i := range fixedKeys {
		roundKeys[i] = expandKey128(fixedKeys[i])
	}
}

func prgExpandAccel(first, nk int, dst, src []block) bool {
	if !useAESNI {
		return false
	}
	var scratch [8]block
	prgExpandAsm(&roundKeys[first], nk, &dst[0], &src[0], len(src), &scratch)
	return true
}

func prgSumAccel(first int, sums, src []block) bool {
	if !useAESNI {
		return false
	}
	var scratch [8]block
	prgSumAsm(&roundKeys[first], len(sums), &sums[0], &src[0], len(src), &scratch)
	return true
}
