//go:build amd64 && !purego

package fss

import "golang.org/x/sys/cpu"

// AES-NI path. The standard library pipelines AES only in its CTR and GCM
// keystreams, which encrypt counters, not the arbitrary inputs σ(s) the
// fixed-key PRG needs, and crypto/aes's Block.Encrypt runs one block per
// call. prgNodeAsm keeps eight independent blocks in flight through
// AESENC, as the standard library's own CTR assembly does, so the PRG runs
// at the CTR keystream's speed. AESENC is constant time and the keys are
// public.

// With VAES (useVAES), prgNodeVAES keeps sixteen blocks in flight, two
// per YMM register, and prgNodeAsm takes the seeds left over.

// roundKeys are the AES-128 key schedules of fixedKeys, 11 round keys of
// 16 bytes each, in the byte order AESENC expects.
var roundKeys [prgKeys][176]byte

var useAESNI, useVAES bool

// prgNodeArgs are the arguments of prgNodeAsm; the assembly reads the
// fields at offsets 0, 8, …, 80.
type prgNodeArgs struct {
	leftKey, rightKey *[176]byte // nil: that child seed is not wanted
	valueKeys         *[176]byte // schedules of the summed value keys
	values            int        // number of summed value keys
	left, right       *block     // child seed outputs, one per seed
	sums              *block     // one per value key
	seeds             *block
	n                 int // number of seeds
	scratch           *[16]block
	valueStride       int // bytes; not 0: store the value blocks instead of summing them
}

// prgNodeAsm is prgNode on AES-NI.
//
//go:noescape
func prgNodeAsm(a *prgNodeArgs)

// prgNodeVAES is prgNodeAsm for a multiple of 16 seeds, on VAES.
//
//go:noescape
func prgNodeVAES(a *prgNodeArgs)

func hasAESNI() bool

// x86Features reports whether the CPU and the OS support AVX2, and VAES
// on YMM registers.
func x86Features() (avx2, vaes bool)

func initAccel() {
	useAESNI = hasAESNI()
	avx2, vaes := x86Features()
	useAVX2, useVAES = avx2, useAESNI && vaes
	useAVX512 = avx2 && cpu.X86.HasAVX512F
	for i := range fixedKeys {
		roundKeys[i] = expandKey128(fixedKeys[i])
	}
}

func prgNodeAccel(m int, seeds, left, right []block, valueFirst int, sums []block) bool {
	if !useAESNI {
		return false
	}
	var scratch [16]block
	a := prgNodeArgs{
		valueKeys: &roundKeys[1+valueFirst],
		values:    len(sums),
		scratch:   &scratch,
	}
	if len(sums) > 0 {
		a.sums = &sums[0]
	}
	if left != nil {
		a.leftKey = &roundKeys[0]
	}
	if right != nil {
		a.rightKey = &roundKeys[rightSeedKey(m)]
	}
	runAccel(a, seeds, left, right, nil)
	return true
}

// runAccel runs the PRG of a on seeds, writing child seeds to left and
// right when non-nil and, when vals is, value block j of seed i to
// vals[j·stride + i] (a.valueStride = 16·stride): the first multiple of 16
// seeds on VAES when there is, the rest on AES-NI.
func runAccel(a prgNodeArgs, seeds, left, right, vals []block) {
	vaesSeeds := 0
	if useVAES {
		vaesSeeds = len(seeds) &^ 15
	}
	for _, part := range [2][2]int{{0, vaesSeeds}, {vaesSeeds, len(seeds)}} {
		from, to := part[0], part[1]
		if from == to {
			continue
		}
		a.seeds, a.n = &seeds[from], to-from
		if left != nil {
			a.left = &left[from]
		}
		if right != nil {
			a.right = &right[from]
		}
		if vals != nil {
			a.sums = &vals[from]
		}
		if to == vaesSeeds {
			prgNodeVAES(&a)
		} else {
			prgNodeAsm(&a)
		}
	}
}

func hashEachAccel(ka, kb int, seeds, a, b []block) bool {
	if !useAESNI {
		return false
	}
	var scratch [16]block
	args := prgNodeArgs{leftKey: &roundKeys[ka], scratch: &scratch}
	if b != nil {
		args.rightKey = &roundKeys[kb]
	}
	runAccel(args, seeds, a, b, nil)
	return true
}

func hashNodeAccel(m int, seeds, left, right []block, values int, vals []block, stride int) bool {
	if !useAESNI {
		return false
	}
	var scratch [16]block
	a := prgNodeArgs{valueKeys: &roundKeys[1], values: values, scratch: &scratch, valueStride: 16 * stride}
	if left != nil {
		a.leftKey = &roundKeys[0]
	}
	if right != nil {
		a.rightKey = &roundKeys[rightSeedKey(m)]
	}
	runAccel(a, seeds, left, right, vals)
	return true
}
