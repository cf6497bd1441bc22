//go:build amd64 && !purego

package fss

// AES-NI path. The standard library pipelines AES only in its CTR and GCM
// keystreams, which encrypt counters, not the arbitrary inputs σ(s) the
// fixed-key PRG needs, and crypto/aes's Block.Encrypt runs one block per
// call. prgNodeAsm keeps eight independent blocks in flight through
// AESENC, as the standard library's own CTR assembly does, so the PRG runs
// at the CTR keystream's speed. AESENC is constant time and the keys are
// public.

// roundKeys are the AES-128 key schedules of fixedKeys, 11 round keys of
// 16 bytes each, in the byte order AESENC expects.
var roundKeys [prgKeys][176]byte

var useAESNI bool

// prgNodeArgs are the arguments of prgNodeAsm; the assembly reads the
// fields at offsets 0, 8, …, 72.
type prgNodeArgs struct {
	leftKey, rightKey *[176]byte // nil: that child seed is not wanted
	valueKeys         *[176]byte // schedules of the summed value keys
	values            int        // number of summed value keys
	left, right       *block     // child seed outputs, one per seed
	sums              *block     // one per value key
	seeds             *block
	n                 int // number of seeds
	scratch           *[8]block
}

// prgNodeAsm is prgNode on AES-NI.
//
//go:noescape
func prgNodeAsm(a *prgNodeArgs)

func hasAESNI() bool

func initAccel() {
	useAESNI = hasAESNI()
	for i := range fixedKeys {
		roundKeys[i] = expandKey128(fixedKeys[i])
	}
}

func prgNodeAccel(m int, seeds, left, right []block, valueFirst int, sums []block) bool {
	if !useAESNI {
		return false
	}
	var scratch [8]block
	a := prgNodeArgs{
		valueKeys: &roundKeys[1+valueFirst],
		values:    len(sums),
		seeds:     &seeds[0],
		n:         len(seeds),
		scratch:   &scratch,
	}
	if len(sums) > 0 {
		a.sums = &sums[0]
	}
	if left != nil {
		a.leftKey, a.left = &roundKeys[0], &left[0]
	}
	if right != nil {
		a.rightKey, a.right = &roundKeys[rightSeedKey(m)], &right[0]
	}
	prgNodeAsm(&a)
	return true
}

func hashEachAccel(ka, kb int, seeds, a, b []block) bool {
	if !useAESNI {
		return false
	}
	var scratch [8]block
	args := prgNodeArgs{leftKey: &roundKeys[ka], left: &a[0], seeds: &seeds[0], n: len(seeds), scratch: &scratch}
	if b != nil {
		args.rightKey, args.right = &roundKeys[kb], &b[0]
	}
	prgNodeAsm(&args)
	return true
}
