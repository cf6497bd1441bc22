//go:build amd64 && !purego

package vdcf

import (
	"golang.org/x/sys/cpu"

	"github.com/fedecdf/fedecdf/fss"
)

// useIFMA: the sketch runs on AVX-512 IFMA;
// useAVX512: its fold into an aggregate on AVX-512.
var (
	useIFMA   = cpu.X86.HasAVX512F && cpu.X86.HasAVX512IFMA
	useAVX512 = cpu.X86.HasAVX512F
)

// fold3AVX512 and fold4AVX512 are the assembly kernels of foldAccel for
// 3- and 4-component vectors (sketch_amd64.s).
//
//go:noescape
func fold3AVX512(p *fss.Fp, count, label *uint64, n int)

//go:noescape
func fold4AVX512(p *fss.Fp, count, label *uint64, n int)

// foldAccel adds the count and label of the first done prefixes (a
// multiple of 8; 0 without AVX-512) of an m-component prefix vector,
// m = 3 or 4, to the lazily reduced sums count and label (fss.AddLazy).
func foldAccel(prefixes []fss.Fp, m int, count, label []uint64) (done int) {
	n := len(count) &^ 7
	if !useAVX512 || n == 0 || m < 3 || m > 4 {
		return 0
	}
	_, _ = prefixes[m*n-1], label[n-1]
	if m == 3 {
		fold3AVX512(&prefixes[0], &count[0], &label[0], n)
	} else {
		fold4AVX512(&prefixes[0], &count[0], &label[0], n)
	}
	return n
}

// sketch3IFMA and sketch4IFMA are the assembly kernels of sketchAccel
// for 3- and 4-component vectors (sketch_amd64.s).
//
//go:noescape
func sketch3IFMA(p, u, w *fss.Fp, n int, acc *[12][8]uint64)

//go:noescape
func sketch4IFMA(p, u, w *fss.Fp, n int, acc *[15][8]uint64)

// ifmaBlock is the most prefixes one kernel call takes, so that its lane
// sums cannot overflow.
const ifmaBlock = 1024

// sketchAccel returns, for a prefix vector of m = 3 or 4 components, the
// sums Σ_j u_j·C_j, Σ_j u_j·L_j, Σ_j u_j·M_j, Σ_j u_j·P_j (0 for m = 3)
// and Σ_j w_j·C_j over its first done prefixes (a multiple of 8; 0
// without IFMA), reduced mod p.
func sketchAccel(prefixes, u, w []fss.Fp, m int) (sums [5]fss.Fp, done int) {
	n := len(u) &^ 7
	if !useIFMA || n == 0 || m < 3 || m > 4 {
		return sums, 0
	}
	_, _ = prefixes[m*n-1], w[n-1]
	var acc [15][8]uint64
	at := [5]int{0, 1, 2, 4} // m = 3: the kernel's sums d → sums[at[d]]
	if m == 4 {
		at = [5]int{0, 1, 2, 3, 4}
	}
	for lo := 0; lo < n; lo += ifmaBlock {
		k := min(ifmaBlock, n-lo)
		if m == 3 {
			sketch3IFMA(&prefixes[3*lo], &u[lo], &w[lo], k, (*[12][8]uint64)(acc[:12]))
		} else {
			sketch4IFMA(&prefixes[4*lo], &u[lo], &w[lo], k, &acc)
		}
		for d := range m + 1 {
			s := &sums[at[d]]
			*s = s.Add(limbSum(&acc[3*d], 1)).Add(limbSum(&acc[3*d+1], twoTo52)).Add(limbSum(&acc[3*d+2], twoTo104))
		}
	}
	return sums, n
}

// twoTo52 and twoTo104 are 2^52 and 2^104 mod p (2^96 ≡ −1).
const (
	twoTo52  = fss.Fp(1 << 52)
	twoTo104 = fss.Fp(fss.Modulus - 1<<8)
)

// limbSum returns the sum of the lanes times the weight, mod p.
func limbSum(lanes *[8]uint64, weight fss.Fp) fss.Fp {
	var s uint64
	for _, x := range lanes {
		s += x
	}
	return fss.Fp(s % fss.Modulus).Mul(weight)
}
