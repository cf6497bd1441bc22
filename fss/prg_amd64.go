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

// prgNodeVAES512 is prgNodeAsm for a multiple of 32 seeds, on VAES over
// ZMM registers (with AVX-512: useVAES and useAVX512); it keeps the
// seeds' σ in registers and does not use a.scratch.
//
//go:noescape
func prgNodeVAES512(a *prgNodeArgs)

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
	a := prgNodeArgs{
		valueKeys: &roundKeys[1+valueFirst],
		values:    len(sums),
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
// vals[j·stride + i] (a.valueStride = 16·stride): the first multiple of 32
// seeds on VAES over ZMM registers when there is, then a multiple of 16 on
// VAES over YMM ones, the rest on AES-NI. Only the last two use a scratch,
// which is then set (and zeroed, as Go zeroes it) here: a full chunk on
// ZMM registers needs none.
func runAccel(a prgNodeArgs, seeds, left, right, vals []block) {
	wide, vaes := accelSplit(len(seeds))
	if wide > 0 {
		runPart(&a, 0, wide, seeds, left, right, vals)
		prgNodeVAES512(&a)
	}
	if wide == len(seeds) {
		return
	}
	var scratch [16]block
	a.scratch = &scratch
	if vaes > wide {
		runPart(&a, wide, vaes, seeds, left, right, vals)
		prgNodeVAES(&a)
	}
	if vaes < len(seeds) {
		runPart(&a, vaes, len(seeds), seeds, left, right, vals)
		prgNodeAsm(&a)
	}
}

// accelSplit returns how runAccel splits n seeds: the first wide on VAES
// over ZMM registers, those up to vaes over YMM ones, the rest on AES-NI.
func accelSplit(n int) (wide, vaes int) {
	if wide4Accel() { // VAES on ZMM registers, as the fused kernels
		wide = n &^ 31
	}
	vaes = wide
	if useVAES {
		vaes += (n - wide) &^ 15
	}
	return wide, vaes
}

// runPart points a at seeds from … to−1 and their outputs. Direct calls
// of the kernels, not through a func value: go:noescape keeps a and the
// scratch it points to on the stack.
func runPart(a *prgNodeArgs, from, to int, seeds, left, right, vals []block) {
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
}

func hashEachAccel(ka, kb int, seeds, a, b []block) bool {
	if !useAESNI {
		return false
	}
	args := prgNodeArgs{leftKey: &roundKeys[ka]}
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
	a := prgNodeArgs{valueKeys: &roundKeys[1], values: values, valueStride: 16 * stride}
	if left != nil {
		a.leftKey = &roundKeys[0]
	}
	if right != nil {
		a.rightKey = &roundKeys[rightSeedKey(m)]
	}
	runAccel(a, seeds, left, right, vals)
	return true
}
