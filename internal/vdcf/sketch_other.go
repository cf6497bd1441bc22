//go:build !amd64 || purego

package vdcf

import "github.com/fedecdf/fedecdf/fss"

// sketchAccel does nothing without AVX-512 IFMA (sketch_amd64.go).
func sketchAccel(prefixes, u, w []fss.Fp, m int) (sums [5]fss.Fp, done int) { return sums, 0 }

// foldAccel does nothing without AVX-512 (sketch_amd64.go).
func foldAccel(prefixes []fss.Fp, m int, count, label []uint64) (done int) { return 0 }
