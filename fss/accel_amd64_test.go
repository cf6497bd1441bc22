//go:build amd64 && !purego

package fss

import "golang.org/x/sys/cpu"

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
