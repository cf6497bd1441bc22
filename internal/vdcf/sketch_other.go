//go:build !amd64 || purego

package vdcf

import "github.com/fedecdf/fedecdf/fss"

// tensorKernel does nothing without AVX-512 IFMA (sketch_amd64.go).
func tensorKernel(p, prev, alpha, alpha2 []fss.Fp, rows, m, mac int, tail bool, acc *limbAcc) bool {
	return false
}

// foldAccel does nothing without AVX-512 (sketch_amd64.go).
func foldAccel(prefixes []fss.Fp, m int, comp []int, sums []uint64) (done int) { return 0 }
