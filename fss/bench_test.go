package fss

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/internal/cpuclock"
)

func BenchmarkGen(b *testing.B) {
	src := testRand(70)
	beta := []uint64{1, 2, 3}
	for b.Loop() {
		if _, _, err := Gen(12345, beta, 16, src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEval(b *testing.B) {
	k0, _, _ := Gen(12345, []uint64{1, 2, 3}, 16, testRand(71))
	for b.Loop() {
		if _, err := Eval(k0, 4321); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSumBatch reports ns per key and point and ns per AES block in
// the batch evaluator (one goroutine); `fedecdf bench fss` gives the ratio
// to the crypto/aes CTR keystream (BenchmarkAESCTR).
func BenchmarkSumBatch(b *testing.B) {
	const n, m, keys = 16, 3, 64
	r := rand.New(testRand(72))
	k0, _, _ := genMany(b, r, keys, n, m, nil)
	for _, count := range []int{64, 1024, 1 << n} {
		points := make([]uint64, count) // evenly spaced
		for j := range points {
			points[j] = uint64(j) << n / uint64(count)
		}
		_, perKey, _ := BatchCost(n, m, points)
		acc := make([]uint64, count*m)
		b.Run(fmt.Sprintf("B=%d", count), func(b *testing.B) {
			for b.Loop() {
				if _, err := sumBatch(k0, points, acc, false, 1); err != nil {
					b.Fatal(err)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(ns/float64(keys*count), "ns/key-point")
			b.ReportMetric(ns/float64(keys*perKey), "ns/aes-block")
		})
	}
}

// refBlocks is the batch size of BenchmarkPRG and BenchmarkAESCTR.
const refBlocks = 1024

// BenchmarkPRG is the MMO hash on 1024-block batches.
func BenchmarkPRG(b *testing.B) {
	seeds, out := make([]block, refBlocks), make([]block, refBlocks)
	b.SetBytes(16 * refBlocks)
	for b.Loop() {
		prgNode(1, seeds, out, nil, 0, nil)
	}
}

// BenchmarkAESCTR is the reference: the crypto/aes CTR keystream.
func BenchmarkAESCTR(b *testing.B) {
	c, _ := aes.NewCipher(make([]byte, 16))
	s := cipher.NewCTR(c, make([]byte, 16))
	buf := make([]byte, 16*refBlocks)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		s.XORKeyStream(buf, buf)
	}
}

// BenchmarkAccelerations times, for each PRG and walker acceleration this
// CPU has (AES-NI alone; AVX2; VAES on YMM; AVX-512), the batch evaluator
// at B = 1024 and the PRG alone, in process CPU time per AES block, and
// their ratio to the crypto/aes CTR keystream timed the same way right
// after (ctr-ratio): what `fedecdf bench fss`'s ratio is made of (README,
// "Function secret sharing speed"). Run it with GOMAXPROCS=1.
func BenchmarkAccelerations(b *testing.B) {
	const n, m, keys, count = 16, 3, 64, 1024
	k0, _, _ := genMany(b, rand.New(testRand(73)), keys, n, m, nil)
	points := make([]uint64, count) // evenly spaced
	for j := range points {
		points[j] = uint64(j) << n / count
	}
	_, perKey, _ := BatchCost(n, m, points)
	acc := make([]uint64, count*m)
	seeds, out := make([]block, refBlocks), make([]block, refBlocks)
	c, _ := aes.NewCipher(make([]byte, 16))
	ctr := cipher.NewCTR(c, make([]byte, 16))
	buf := make([]byte, 16*refBlocks)
	ctrNs := func() float64 {
		const calls = 20000
		start := cpuclock.Process()
		for range calls {
			ctr.XORKeyStream(buf, buf)
		}
		return float64((cpuclock.Process() - start).Nanoseconds()) / (calls * refBlocks)
	}
	for _, a := range accelerations() {
		for _, part := range []struct {
			name   string
			blocks int
			run    func()
		}{
			{"batch", keys * perKey, func() { sumBatch(k0, points, acc, false, 1) }},
			{"prg", refBlocks, func() { prgNode(1, seeds, out, nil, 0, nil) }},
		} {
			b.Run(a.name+"/"+part.name, func(b *testing.B) {
				defer a.use()()
				start := cpuclock.Process()
				for b.Loop() {
					part.run()
				}
				ns := float64((cpuclock.Process() - start).Nanoseconds()) / float64(b.N*part.blocks)
				b.ReportMetric(ns, "cpu-ns/aes-block")
				b.ReportMetric(ns/ctrNs(), "ctr-ratio")
			})
		}
	}
}
