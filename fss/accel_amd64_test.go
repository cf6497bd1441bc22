//go:build amd64 && !purego

package fss

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// accelerations are the PRG and walker loops this machine can run: AES-NI
// alone, and VAES and AVX2 with AES-NI for the rest when it has them.
func accelerations() []accel {
	set := func(avx2, vaes, avx512 bool) func() func() {
		return func() func() {
			oldAVX2, oldVAES, oldAVX512 := useAVX2, useVAES, useAVX512
			useAVX2, useVAES, useAVX512 = avx2, vaes, avx512
			return func() { useAVX2, useVAES, useAVX512 = oldAVX2, oldVAES, oldAVX512 }
		}
	}
	accels := []accel{{"aesni", set(false, false, false)}}
	if avx2, vaes := x86Features(); avx2 && useAESNI {
		accels = append(accels, accel{"avx2", set(true, false, false)})
		if vaes {
			accels = append(accels, accel{"avx2+vaes", set(true, true, false)})
		}
		if vaes && cpu.X86.HasAVX512F {
			accels = append(accels, accel{"avx512+vaes", set(true, true, true)})
		}
	}
	return accels
}

// TestKernelsDispatched checks that each acceleration this machine has
// takes the kernels it is for (a dispatch that falls back to a slower
// loop gives the same outputs, so the equality tests cannot see it): the
// PRG's split of 70 seeds between ZMM, YMM and XMM registers, and the
// field walker's fused path for m = 4 and 5, which takes 64 of 70 keys.
func TestKernelsDispatched(t *testing.T) {
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			want := map[string][2]int{"aesni": {0, 0}, "avx2": {0, 0}, "avx2+vaes": {0, 64}, "avx512+vaes": {64, 64}}[accel.name]
			if wide, vaes := accelSplit(70); [2]int{wide, vaes} != want {
				t.Errorf("70 seeds split at %d, %d, want %v", wide, vaes, want)
			}
			fused := accel.name == "avx512+vaes"
			for _, m := range []int{3, 4, 5, 6} {
				w := newFieldWalker(3, m, leafRun)
				w.points = []uint64{0, 1}
				want := fused && (m == 4 || m == 5)
				if got := w.wide != nil; got != want {
					t.Errorf("m = %d: fused path %v, want %v", m, got, want)
				}
				if m != 4 && m != 5 {
					continue
				}
				keys := make([]*FieldKey, 70)
				out := make([][]Fp, len(keys))
				for i := range keys {
					keys[i], _, _ = GenField(1, []Fp{1, 2, 3, 4, 5}[:m], 3, testRand(uint64(i)))
					out[i] = make([]Fp, 2*m)
				}
				if rest, _ := w.runFused(keys, out); fused && len(rest) != 6 || !fused && len(rest) != 70 {
					t.Errorf("m = %d: the fused path left %d of 70 keys", m, len(rest))
				}
			}
		})
	}
}

// TestFusedKernelArgOffsets checks the offsets at which fwide_amd64.s
// reads the fused kernels' arguments.
func TestFusedKernelArgOffsets(t *testing.T) {
	var n node4Args
	var l leaf4Args
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"node4Args.cwL", unsafe.Offsetof(n.cwL), 32}, {"node4Args.lseed", unsafe.Offsetof(n.lseed), 48},
		{"node4Args.lmask", unsafe.Offsetof(n.lmask), 64}, {"node4Args.lval", unsafe.Offsetof(n.lval), 80},
		{"node4Args.n", unsafe.Offsetof(n.n), 96}, {"node4Args.stride", unsafe.Offsetof(n.stride), 104},
		{"node4Args.keys", unsafe.Offsetof(n.keys), 112},
		{"leaf4Args.out", unsafe.Offsetof(l.out), 32}, {"leaf4Args.rowBytes", unsafe.Offsetof(l.rowBytes), 40},
		{"leaf4Args.n", unsafe.Offsetof(l.n), 48}, {"leaf4Args.stride", unsafe.Offsetof(l.stride), 56},
		{"leaf4Args.neg", unsafe.Offsetof(l.neg), 64}, {"leaf4Args.keys", unsafe.Offsetof(l.keys), 72},
	} {
		if f.got != f.want {
			t.Errorf("%s at offset %d, the assembly reads %d", f.name, f.got, f.want)
		}
	}
}
