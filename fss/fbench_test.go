package fss

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkFieldPrefixes is the full-domain evaluation of 64 field keys
// over a 1024-bin prefix domain on one goroutine, per key, next to the
// Z_2^64 DCF's summed full-domain evaluation (SumPrefixes) of as many keys.
func BenchmarkFieldPrefixes(b *testing.B) {
	const bins, keys = 1024, chunkKeys
	dom, _ := NewPrefixDomain(bins)
	r := rand.New(testRand(87))
	prefixes := make([]int, bins)
	for j := range prefixes {
		prefixes[j] = j
	}
	for _, m := range []int{3, 4, 5} {
		fk := make([]*FieldKey, keys)
		zk := make([]*Key, keys)
		out := make([][]Fp, keys)
		for i := range fk {
			fk[i], _, _ = dom.GenField(r.IntN(bins), randomFieldBeta(r, m), testRand(r.Uint64()))
			zk[i], _, _ = dom.Gen(r.IntN(bins), randomBeta(r, m), testRand(r.Uint64()))
			out[i] = make([]Fp, bins*m)
		}
		b.Run(fmt.Sprintf("field/m=%d", m), func(b *testing.B) {
			for b.Loop() {
				if err := dom.fieldPrefixes(fk, out, nil, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
		})
		b.Run(fmt.Sprintf("z2^64/m=%d", m), func(b *testing.B) {
			points := make([]uint64, bins)
			for x := range points {
				points[x] = uint64(x)
			}
			acc := make([]uint64, bins*m)
			for b.Loop() {
				if _, err := sumBatch(zk, points, acc, true, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
		})
	}
}
