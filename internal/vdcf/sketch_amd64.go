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

// tensor4IFMA is the assembly kernel of tensorAccel (sketch_amd64.s).
//
//go:noescape
func tensor4IFMA(p *fss.Fp, prev *[3]fss.Fp, alpha, alpha2 *fss.Fp, rows, mac int, acc *[12][8]uint64)

// tensorBlock is the most rows one kernel call takes, so that its lane
// sums cannot overflow: per row a lane's part gains below 3·2^52, and
// 3·2^52·512 < 2^64.
const tensorBlock = 512

// tensorAccel adds to the column sums cols, for a 4-component prefix
// vector (5-component: tensor5Accel), the rows the AVX-512 IFMA kernel
// sums (the whole rows of tensorCols prefixes; none without IFMA) and returns
// their number: per column l, Σ_h α_h·ΔP_c(h, l) for the count, label
// and MAC component mac, and Σ_h α_h²·ΔCount(h, l).
func tensorAccel(prefixes, alpha, alpha2 []fss.Fp, m, mac int, cols *columns) (rows int) {
	if m == 5 {
		return tensor5Accel(prefixes, alpha, alpha2, mac, cols)
	}
	rows = len(prefixes) / (m * tensorCols)
	if !useIFMA || rows == 0 || m != 4 || (mac != 2 && mac != 3) {
		return 0
	}
	_, _ = prefixes[m*tensorCols*rows-1], alpha2[rows-1]
	var acc [12][8]uint64
	var prev [3]fss.Fp // P(j − 1) of the block's first prefix j: count, label, MAC
	sums := [4]int{sumCount, sumLabel, sumMAC, sumSquare}
	for lo := 0; lo < rows; lo += tensorBlock {
		if lo > 0 {
			last := prefixes[m*(tensorCols*lo-1):]
			prev = [3]fss.Fp{last[payload.Count], last[payload.Label], last[mac]}
		}
		k := min(tensorBlock, rows-lo)
		tensor4IFMA(&prefixes[m*tensorCols*lo], &prev, &alpha[lo], &alpha2[lo], k, mac, &acc)
		for d, sum := range sums {
			for l := range tensorCols {
				cols[sum][l] = cols[sum][l].addLimbs(acc[3*d][l], acc[3*d+1][l], acc[3*d+2][l])
			}
		}
	}
	return rows
}
