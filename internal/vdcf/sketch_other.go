//go:build !amd64 || purego

package vdcf

import "github.com/fedecdf/fedecdf/fss"

// tensorKernel does nothing without AVX-512 IFMA (sketch_amd64.go).
func tensorKernel(p, prev []fss.Fp, chk *[checks]runCheck, h, rows, m int, keep [3][]fss.Fp) (ok, kept bool) {
	return false, false
}

// keepKernel does nothing without AVX-512 (sketch_amd64.go).
func keepKernel(p []fss.Fp, rows, m int, keep [3][]fss.Fp) bool { return false }

// addLazyAccel does nothing without AVX-512 (sketch_amd64.go).
func addLazyAccel(sums []uint64, x []fss.Fp) (done int) { return 0 }

// squareAccel does nothing without AVX-512 (sketch_amd64.go).
func squareAccel(dst, src []fss.Fp) (done int) { return 0 }
