//go:build amd64 && !purego

package vdcf

import (
	"golang.org/x/sys/cpu"

	"github.com/fedecdf/fedecdf/fss"
)

// useIFMA: the sketch runs on AVX-512 IFMA;
// useAVX512: the additions to an aggregate and the challenges' squares
// on AVX-512.
var (
	useIFMA   = cpu.X86.HasAVX512F && cpu.X86.HasAVX512IFMA
	useAVX512 = cpu.X86.HasAVX512F
)

// addLazyAVX512 is the assembly kernel of addLazyAccel (sketch_amd64.s).
//
//go:noescape
func addLazyAVX512(sum *uint64, x *fss.Fp, n int)

// addLazyAccel adds x[i] to the lazily reduced sums[i] (fss.AddLazy)
// for the first done = len(x) rounded down to a multiple of 8 (0 without
// AVX-512), eight per instruction.
func addLazyAccel(sums []uint64, x []fss.Fp) (done int) {
	n := len(x) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	_ = sums[n-1]
	addLazyAVX512(&sums[0], &x[0], n)
	return n
}

// squareAVX512 is the assembly kernel of squareAccel (sketch_amd64.s).
//
//go:noescape
func squareAVX512(dst, src *fss.Fp, n int)

// squareAccel sets dst[i] = src[i]² for the first done = len(src)
// rounded down to a multiple of 8 (0 without AVX-512), eight per
// instruction.
func squareAccel(dst, src []fss.Fp) (done int) {
	n := len(src) &^ 7
	if !useAVX512 || n == 0 {
		return 0
	}
	_ = dst[n-1]
	squareAVX512(&dst[0], &src[0], n)
	return n
}

// tensor4IFMA is the assembly kernel of tensorKernel for 4-component
// vectors (sketch_amd64.s): both checks' sums, and the count and label
// kept.
//
//go:noescape
func tensor4IFMA(p *fss.Fp, prev *[4]fss.Fp, alpha0, alpha20, alpha1, alpha21 *fss.Fp, rows int, acc0, acc1 *[12][8]uint64, count, label *fss.Fp)

// tensorKernel adds to the lane sums of both checks chk the IFMA
// kernel's sums over rows ≥ 1 whole rows of an m-component vector p
// (tensorCols prefixes each), the first at row h of the challenge
// tensor, prev the prefix before the first (nil: zeros), in one call;
// unless keep[0] is nil it also copies the rows' summed components
// (Scheme.Summed()[k]) to keep[k] (kept). It returns false, adding
// nothing, where the CPU has no IFMA.
func tensorKernel(p, prev []fss.Fp, chk *[checks]runCheck, h, rows, m int, keep [3][]fss.Fp) (ok, kept bool) {
	if !useIFMA || rows < 1 {
		return false, false
	}
	n := tensorCols * rows
	_ = p[m*n-1]
	a0, a1 := chk[0].coef, chk[1].coef
	_, _, _, _ = a0.alpha[h+rows-1], a0.alpha2[h+rows-1], a1.alpha[h+rows-1], a1.alpha2[h+rows-1]
	var out [3]*fss.Fp
	if keep[0] != nil {
		for k := range m - 2 { // the summed components: 2 of 4, 3 of 5
			_ = keep[k][n-1]
			out[k] = &keep[k][0]
		}
		kept = true
	}
	switch m {
	case 4:
		var pv [4]fss.Fp
		copy(pv[:], prev)
		tensor4IFMA(&p[0], &pv, &a0.alpha[h], &a0.alpha2[h], &a1.alpha[h], &a1.alpha2[h], rows,
			(*[12][8]uint64)(chk[0].acc[:12]), (*[12][8]uint64)(chk[1].acc[:12]), out[0], out[1])
	case 5:
		var pv [5]fss.Fp
		copy(pv[:], prev)
		for lo := 0; lo < rows; lo += tensor5Rows {
			k := min(tensor5Rows, rows-lo)
			if lo > 0 {
				copy(pv[:], p[5*(tensorCols*lo-1):])
			}
			var o [3]*fss.Fp
			if kept {
				o = [3]*fss.Fp{&keep[0][tensorCols*lo], &keep[1][tensorCols*lo], &keep[2][tensorCols*lo]}
			}
			tensor5IFMA(&p[5*tensorCols*lo], &pv, &a0.alpha[h+lo], &a0.alpha2[h+lo], &a1.alpha[h+lo], &a1.alpha2[h+lo], k,
				&chk[0].acc, &chk[1].acc, &gather5, o[0], o[1], o[2])
		}
	default:
		return false, false
	}
	return true, kept
}

// keep4AVX512 is the assembly kernel of keepKernel for 4-component
// vectors (sketch_amd64.s).
//
//go:noescape
func keep4AVX512(p *fss.Fp, rows int, count, label *fss.Fp)

// keepKernel copies the summed components (Scheme.Summed()[k]) of
// rows ≥ 1 whole rows of an m-component vector p (tensorCols prefixes
// each) to keep[k], eight prefixes per instruction. It returns false,
// copying nothing, where the CPU has no AVX-512.
func keepKernel(p []fss.Fp, rows, m int, keep [3][]fss.Fp) bool {
	if !useAVX512 || rows < 1 {
		return false
	}
	n := tensorCols * rows
	_ = p[m*n-1]
	_, _ = keep[0][n-1], keep[1][n-1]
	switch m {
	case 4:
		keep4AVX512(&p[0], rows, &keep[0][0], &keep[1][0])
	case 5:
		_ = keep[2][n-1]
		keep5AVX512(&p[0], rows, &keep5Index, &keep[0][0], &keep[1][0], &keep[2][0])
	default:
		return false
	}
	return true
}
