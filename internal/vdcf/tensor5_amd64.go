//go:build amd64 && !purego

package vdcf

import (
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// The AVX-512 kernels of the probability scheme, whose prefix vectors
// have five components (count, label, MAC, probability, second MAC):
// the sketch under a tensor challenge (tensor5IFMA), in tensor5_amd64.s.

// tensor5IFMA is the assembly kernel of tensorKernel for 5-component
// vectors, at most tensor5Rows rows a call: it transposes the rows into
// their components (gather5), keeping their first differences in its
// frame, and weighs, per check, the four components the check sums and
// the count's square (limbAcc's layout of the 4-component kernel, the
// probability's sum at acc[12 … 14]); first, unless count is nil, it
// stores the rows' summed components.
//
//go:noescape
func tensor5IFMA(p *fss.Fp, prev *[5]fss.Fp, alpha0, alpha20, alpha1, alpha21 *fss.Fp, rows int, acc0, acc1 *limbAcc, index *[5][4][8]uint64, count, label, prob *fss.Fp)

// tensor5Rows is the most rows tensor5IFMA takes a call: its frame holds
// their differences, 640 bytes a row.
const tensor5Rows = 4

// keep5AVX512 is the assembly kernel of keepKernel for 5-component
// vectors.
//
//go:noescape
func keep5AVX512(p *fss.Fp, rows int, index *[3][4][8]uint64, count, label, prob *fss.Fp)

// keep5Index are the permutations (gather5) of the components a server
// sums (Scheme.Summed): the count, the label and the probability; the
// count's also gathers its differences for the square's sum.
var keep5Index = [3][4][8]uint64{gather5[payload.Count], gather5[payload.Label], gather5[Probability]}

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
