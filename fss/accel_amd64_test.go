//go:build amd64 && !purego

package fss

// accelerations are the PRG and walker loops this machine can run: AES-NI
// alone, and VAES and AVX2 with AES-NI for the rest when it has them.
func accelerations() []accel {
	set := func(avx2, vaes bool) func() func() {
		return func() func() {
			oldAVX2, oldVAES := useAVX2, useVAES
			useAVX2, useVAES = avx2, vaes
			return func() { useAVX2, useVAES = oldAVX2, oldVAES }
		}
	}
	accels := []accel{{"aesni", set(false, false)}}
	if avx2, vaes := x86Features(); avx2 && useAESNI {
		accels = append(accels, accel{"avx2", set(true, false)})
		if vaes {
			accels = append(accels, accel{"avx2+vaes", set(true, true)})
		}
	}
	return accels
}
