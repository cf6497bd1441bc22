//go:build !amd64 || purego

package vdcf

import "github.com/fedecdf/fedecdf/fss"

// tensorAccel does nothing without AVX-512 IFMA (sketch_amd64.go).
func tensorAccel(prefixes, alpha, alpha2 []fss.Fp, m, mac int, cols *columns) (rows int) { return 0 }

// foldAccel does nothing without AVX-512 (sketch_amd64.go).
func foldAccel(prefixes []fss.Fp, m int, comp []int, sums []uint64) (done int) { return 0 }
