//go:build amd64 && !purego

package vdcf

import (
	"fmt"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/fss"
)

// accelPath is a way to run the sketch and the aggregate: set turns it on for
// one test.
type accelPath struct {
	name string
	set  func(t *testing.T)
}

// accelPaths are the scalar loops and, where the CPU has them, the
// AVX-512 kernels.
func accelPaths(t *testing.T) []accelPath {
	with := func(ifma, avx512 bool) func(t *testing.T) {
		return func(t *testing.T) {
			oldIFMA, oldAVX512 := useIFMA, useAVX512
			useIFMA, useAVX512 = ifma, avx512
			t.Cleanup(func() { useIFMA, useAVX512 = oldIFMA, oldAVX512 })
		}
	}
	paths := []accelPath{{"scalar", with(false, false)}}
	if useIFMA && useAVX512 {
		paths = append(paths, accelPath{"avx512", with(true, true)})
	} else {
		t.Log("no AVX-512 IFMA: the vector kernels are not tested here")
	}
	return paths
}

// TestKernelsDispatched checks that, where the CPU has them, the vector
// kernels take what they are for (a dispatch that falls back to the
// portable loops gives the same sums, so the sums tests cannot see it):
// the whole rows of the sketch's runs, for 4- and 5-component vectors,
// and an aggregate's additions' multiples of 8 elements.
func TestKernelsDispatched(t *testing.T) {
	if !useIFMA || !useAVX512 {
		t.Skip("no AVX-512 IFMA: no kernel to dispatch to")
	}
	const bins = 1031 // 128 whole rows, 1024 prefixes in groups of 8
	for _, prob := range []bool{false, true} {
		f := newFixture(t, bins, 43)
		if prob {
			f = newProbFixture(t, bins, 43)
		}
		m := f.s.Components()
		t.Run(fmt.Sprintf("m=%d", m), func(t *testing.T) {
			vec := make([]fss.Fp, bins*m)
			c := factorsOf(bins, func() fss.Fp { return 1 })
			chk := [checks]runCheck{{coef: c, mac: f.s.macOf(0)}, {coef: c, mac: f.s.macOf(1)}}
			summed := make([]fss.Fp, len(f.s.Summed())*bins)
			ok, kept := tensorKernel(vec[runLen*m:2*runLen*m], vec[(runLen-1)*m:runLen*m], &chk, runLen/tensorCols, runLen/tensorCols, m, keepAt(summed, bins, runLen, m))
			if !ok || !kept {
				t.Errorf("sketch kernel took a run: %v, kept its summed components: %v, want true, true", ok, kept)
			}
			if !keepKernel(vec, bins/tensorCols, m, keepAt(summed, bins, 0, m)) {
				t.Error("the summed components' kernel took no rows")
			}
			f.srv[0].addRun(&chk, runLen, vec[runLen*m:2*runLen*m], vec[(runLen-1)*m:runLen*m], nil)
			if rc := &chk[1]; rc.rows != runLen/tensorCols {
				t.Errorf("sketch kernel took %d rows of a run, want %d", rc.rows, runLen/tensorCols)
			}
			if done := addLazyAccel(make([]uint64, len(summed)), summed); done != len(summed)&^7 {
				t.Errorf("aggregate kernel took %d elements, want %d", done, len(summed)&^7)
			}
		})
	}
}

// BenchmarkKernels times the vector kernels and the portable loops in
// one run, alternating them in each iteration, at N = 1024 bins, on 4-
// and 5-component vectors (without and with the probability): one
// report's sketches (both checks, Server.sketches) and the addition of
// one report's summed components to the aggregate a server keeps
// (Aggregate.AddSummed). It reports both times per operation and their
// ratio, portable/kernel.
func BenchmarkKernels(b *testing.B) {
	if !useIFMA || !useAVX512 {
		b.Skip("no AVX-512 IFMA: nothing to compare")
	}
	for _, prob := range []bool{false, true} {
		f := newFixture(b, 1024, 42)
		if prob {
			f = newProbFixture(b, 1024, 42)
		}
		m := f.s.Components()
		vec := make([]fss.Fp, 1024*m)
		for i := range vec {
			vec[i] = fss.Fp(f.r.Uint64N(fss.Modulus))
		}
		c := factorsOf(1024, func() fss.Fp { return fss.Fp(f.r.Uint64N(fss.Modulus)) })
		summed := vec[:len(f.s.Summed())*1024]
		agg, err := f.s.NewAggregate(f.s.Summed())
		if err != nil {
			b.Fatal(err)
		}
		for _, op := range []struct {
			name string
			run  func()
		}{
			{"sketch", func() { f.srv[0].sketches(vec, &[checks]coefficients{*c, *c}) }},
			{"add", func() { _ = agg.AddSummed(summed) }},
		} {
			b.Run(fmt.Sprintf("%s/m=%d", op.name, m), func(b *testing.B) {
				defer func(ifma, avx512 bool) { useIFMA, useAVX512 = ifma, avx512 }(useIFMA, useAVX512)
				var kernel, portable time.Duration
				for b.Loop() {
					t0 := time.Now()
					useIFMA, useAVX512 = true, true
					op.run()
					t1 := time.Now()
					useIFMA, useAVX512 = false, false
					op.run()
					kernel, portable = kernel+t1.Sub(t0), portable+time.Since(t1)
				}
				b.ReportMetric(float64(kernel.Nanoseconds())/float64(b.N), "kernel-ns/op")
				b.ReportMetric(float64(portable.Nanoseconds())/float64(b.N), "portable-ns/op")
				b.ReportMetric(float64(portable)/float64(kernel), "portable/kernel")
			})
		}
	}
}
