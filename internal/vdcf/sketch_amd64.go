//go:build amd64 && !purego

package vdcf

import (
	"golang.org/x/sys/cpu"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// useIFMA: the sketch runs on AVX-512 IFMA;
// useAVX512: its fold into an aggregate on AVX-512.
var (
	useIFMA   = cpu.X86.HasAVX512F && cpu.X86.HasAVX512IFMA
	useAVX512 = cpu.X86.HasAVX512F
)

// fold4AVX512 is the assembly kernel of foldAccel for 4-component
// vectors (sketch_amd64.s).
//
//go:noescape
func fold4AVX512(p *fss.Fp, count, label *uint64, n int)

// foldAccel adds the components comp of the first done prefixes (a
// multiple of 8; 0 without AVX-512) of an m-component prefix vector to
// the lazily reduced sums (fss.AddLazy), component comp[k]'s at
// sums[k·bins:], bins = len(sums)/len(comp): for m = 5 any components
// (tensor5_amd64.go), for m = 4 count and label (in one pass).
func foldAccel(prefixes []fss.Fp, m int, comp []int, sums []uint64) (done int) {
	if len(comp) == 0 {
		return 0
	}
	bins := len(sums) / len(comp)
	n := bins &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	switch {
	case m == 5:
		fold5Accel(prefixes, comp, sums, bins, n)
	case m == 4 && len(comp) == 2 && comp[0] == int(payload.Count) && comp[1] == int(payload.Label):
		_ = prefixes[4*n-1]
		fold4AVX512(&prefixes[0], &sums[0], &sums[bins], n)
	default:
		return 0
	}
	return n
}

// tensor4IFMA is the assembly kernel of tensorKernel for 4-component
// vectors (sketch_amd64.s).
//
//go:noescape
func tensor4IFMA(p *fss.Fp, prev *[3]fss.Fp, alpha, alpha2 *fss.Fp, rows, mac, tail int, acc *[12][8]uint64)

// tensorBlock is the most rows, a tail included, whose sums the
// kernels' lane sums take before they are drained, so that they cannot
// overflow: per row a lane's part gains below 3·2^52, and 3·2^52·512 <
// 2^64.
const tensorBlock = 512

// tensorKernel adds to the lane sums acc of the IFMA kernel of
// m-component vectors (tensor4IFMA, tensor5IFMA) the sums over rows ≥ 1
// whole rows of p (tensorCols prefixes each) under the row factors
// alpha, alpha2 from their first, prev the prefix before the first (nil:
// zeros), and if tail a row of zeros after them (the first difference
// at the next row: the last prefix's negation); it returns false, adding
// nothing, where the CPU has no IFMA.
func tensorKernel(p, prev, alpha, alpha2 []fss.Fp, rows, m, mac int, tail bool, acc *limbAcc) bool {
	if !useIFMA || rows < 1 {
		return false
	}
	t := 0
	if tail {
		t = 1
	}
	_, _, _ = p[m*tensorCols*rows-1], alpha[rows+t-1], alpha2[rows+t-1]
	switch m {
	case 4:
		var pv [3]fss.Fp
		if prev != nil {
			pv = [3]fss.Fp{prev[payload.Count], prev[payload.Label], prev[mac]}
		}
		tensor4IFMA(&p[0], &pv, &alpha[0], &alpha2[0], rows, mac, t, (*[12][8]uint64)(acc[:12]))
	case 5:
		var pv [8]uint64 // lanes 3–7: the prefix before
		for c, x := range prev {
			pv[3+c] = uint64(x)
		}
		tensor5IFMA(&p[0], &pv, &alpha[0], &alpha2[0], rows, t, acc, &gather5[payload.Count])
	default:
		return false
	}
	return true
}
