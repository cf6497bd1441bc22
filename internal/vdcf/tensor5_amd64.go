//go:build amd64 && !purego

package vdcf

import (
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// The AVX-512 kernels of the probability scheme, whose prefix vectors
// have five components (count, label, MAC, probability, second MAC):
// the sketch under a tensor challenge (tensor5IFMA) and the fold of one
// component into an aggregate (fold5AVX512), in tensor5_amd64.s.

// tensor5IFMA is the assembly kernel of tensor5Accel.
//
//go:noescape
func tensor5IFMA(p *fss.Fp, prev *[8]uint64, alpha, alpha2 *fss.Fp, rows int, acc *[18][8]uint64, count *[4][8]uint64)

// fold5AVX512 is the assembly kernel of fold5Accel.
//
//go:noescape
func fold5AVX512(p *fss.Fp, sum *uint64, index *[4][8]uint64, n int)

// tensor5Accel is tensorAccel for a 5-component prefix vector: it adds
// to the column sums cols the whole rows of tensorCols prefixes (none
// without IFMA) and returns their number: per column l, Σ_h α_h·ΔP_c(h, l)
// for the count, label, MAC component mac and probability, and
// Σ_h α_h²·ΔCount(h, l). The kernel weighs the first differences of all
// 40 words of a row at once (the row's weight α_h is one for its eight
// prefixes), so its sums come per word g = 5l + c; the second MAC's are
// dropped.
func tensor5Accel(prefixes, alpha, alpha2 []fss.Fp, mac int, cols *columns) (rows int) {
	const m = 5
	rows = len(prefixes) / (m * tensorCols)
	if !useIFMA || rows == 0 {
		return 0
	}
	_, _ = prefixes[m*tensorCols*rows-1], alpha2[rows-1]
	sumOf := [m]int{-1, -1, -1, -1, -1} // component → sum
	sumOf[payload.Count], sumOf[payload.Label], sumOf[mac], sumOf[Probability] = sumCount, sumLabel, sumMAC, sumProb
	var acc [18][8]uint64
	var prev [8]uint64 // lanes 3–7: P(j − 1) of the block's first prefix j
	for lo := 0; lo < rows; lo += tensorBlock {
		if lo > 0 {
			last := prefixes[m*(tensorCols*lo-1):]
			for c := range m {
				prev[3+c] = uint64(last[c])
			}
		}
		k := min(tensorBlock, rows-lo)
		tensor5IFMA(&prefixes[m*tensorCols*lo], &prev, &alpha[lo], &alpha2[lo], k, &acc, &gather5[payload.Count])
		for g := range m * tensorCols { // word g of a row: register g/8, lane g%8
			if d := sumOf[g%m]; d >= 0 {
				z := acc[3*(g/8):]
				cols[d][g/m] = cols[d][g/m].addLimbs(z[0][g%8], z[1][g%8], z[2][g%8])
			}
		}
		for l := range tensorCols {
			cols[sumSquare][l] = cols[sumSquare][l].addLimbs(acc[15][l], acc[16][l], acc[17][l])
		}
	}
	return rows
}

// fold5Accel adds the components comp of the first n prefixes (a
// multiple of 8) of a 5-component prefix vector to the lazily reduced
// sums, component comp[k]'s at sums[k·bins:].
func fold5Accel(prefixes []fss.Fp, comp []int, sums []uint64, bins, n int) {
	_ = prefixes[5*n-1]
	for k, c := range comp {
		fold5AVX512(&prefixes[0], &sums[k*bins], &gather5[c], n)
	}
}

// gather5[c] are the four chained permutations that gather component c
// of eight prefixes of a 5-component vector from its five rows of eight
// words (GATHER5 in tensor5_amd64.s): component c of prefix j is word
// g = 5j + c; the first step takes rows 0 and 1 (lane j = word g), step
// s > 0 keeps the lanes found before (lane j = j) and takes row s + 1's
// (lane j = word 8 + g − 8(s + 1) of the pair).
var gather5 = func() (t [5][4][8]uint64) {
	for c := range 5 {
		for j := range 8 {
			g := uint64(5*j + c)
			for s := range 4 {
				row := uint64(s + 1)
				switch {
				case s == 0 && g < 16:
					t[c][s][j] = g
				case s > 0 && g < 8*row:
					t[c][s][j] = uint64(j)
				case s > 0 && g < 8*row+8:
					t[c][s][j] = 8 + g - 8*row
				}
			}
		}
	}
	return t
}()
