//go:build amd64 && !purego

package vdcf

import "testing"

// accelPath is a way to run the sketch and the fold: set turns it on for
// one test.
type accelPath struct {
	name string
	set  func(t *testing.T)
}

// accelPaths are the scalar loops and, where the CPU has them, the
// AVX-512 kernels.
func accelPaths(t *testing.T) []accelPath {
	with := func(ifma, avx512 bool) func(t *testing.T) {
		return func(t *testing.T) {
			oldIFMA, oldAVX512 := useIFMA, useAVX512
			useIFMA, useAVX512 = ifma, avx512
			t.Cleanup(func() { useIFMA, useAVX512 = oldIFMA, oldAVX512 })
		}
	}
	paths := []accelPath{{"scalar", with(false, false)}}
	if useIFMA && useAVX512 {
		paths = append(paths, accelPath{"avx512", with(true, true)})
	} else {
		t.Log("no AVX-512 IFMA: the vector kernels are not tested here")
	}
	return paths
}
