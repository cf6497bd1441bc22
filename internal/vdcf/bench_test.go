package vdcf

import (
	crand "crypto/rand"
	"fmt"
	"io"
	"testing"
	"time"
)

// BenchmarkCheck is one server's verification of one report at N = 1024
// bins, its prefix vector evaluated beforehand: Prepare, Exchange, Finish
// against the other server's recorded messages.
func BenchmarkCheck(b *testing.B) {
	f := newFixture(b, 1024, 8)
	r := f.encode(b, 700, true)
	sh, vec := f.evaluate(b, 0, r.Shares[0])
	hsh, hvec := f.evaluate(b, 1, r.Shares[1])
	_, msg, _ := f.srv[0].Prepare(r.Nonce, sh, vec)
	hp, hmsg, _ := f.srv[1].Prepare(r.Nonce, hsh, hvec)
	hsecond, _ := hp.Exchange(msg)
	for b.Loop() {
		p, _, _ := f.srv[0].Prepare(r.Nonce, sh, vec)
		if _, err := p.Exchange(hmsg); err != nil {
			b.Fatal(err)
		}
		if err := p.Finish(hsecond); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode is the party's side at N = 1024 bins: one report's
// keys and correlated randomness, with and without the probability, its
// randomness from a ChaCha8 stream or, as a party's, crypto/rand.
func BenchmarkEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		prob bool
		rnd  io.Reader // nil: the fixture's stream
	}{
		{"count and label", false, nil}, {"with probability", true, nil},
		{"count and label, crypto/rand", false, crand.Reader}, {"with probability, crypto/rand", true, crand.Reader},
	} {
		f := newFixture(b, 1024, 8)
		if tc.prob {
			f = newProbFixture(b, 1024, 8)
		}
		rnd := tc.rnd
		if rnd == nil {
			rnd = f.rnd
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				var err error
				if tc.prob {
					_, err = f.s.EncodeProbability(700, true, MaxProbability/3, rnd)
				} else {
					_, err = f.s.Encode(700, true, rnd)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChallenge is one server's derivation of one report's two
// checks' challenges at N = 1024 bins: coefficients and the challenge
// vectors' tensor factors with their squares.
func BenchmarkChallenge(b *testing.B) {
	f := newFixture(b, 1024, 8)
	nonce := f.nonce()
	sc := f.srv[0].newScratch()
	for b.Loop() {
		f.srv[0].challenges(nonce, sc)
	}
}

// BenchmarkEvaluatePrepare is one server's work on a chunk of 64 reports
// at N = 1024 bins, as the server walks them, both ways in one run,
// alternating in each iteration: "separate", Evaluate the chunk's keys in
// lockstep, then Prepare each report's check from its prefix vector;
// "fused", PrepareAll, which sketches the vectors and keeps their summed
// components as the walk hands them out. It reports both times per
// report and their ratio, fused/separate.
func BenchmarkEvaluatePrepare(b *testing.B) {
	const reports = 64
	f, nonces, shares := benchChunk(b, reports, false)
	var separate, fused time.Duration
	for b.Loop() {
		t0 := time.Now()
		vecs, err := f.srv[0].Evaluate(shares)
		if err != nil {
			b.Fatal(err)
		}
		for i, sh := range shares {
			if _, _, err := f.srv[0].Prepare(nonces[i], sh, vecs[i]); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		if _, err := f.srv[0].PrepareAll(nonces, shares); err != nil {
			b.Fatal(err)
		}
		separate, fused = separate+t1.Sub(t0), fused+time.Since(t1)
	}
	per := float64(b.N * reports)
	b.ReportMetric(float64(separate.Nanoseconds())/per, "separate-ns/report")
	b.ReportMetric(float64(fused.Nanoseconds())/per, "fused-ns/report")
	b.ReportMetric(float64(fused)/float64(separate), "fused/separate")
}

// BenchmarkPrepareAll is PrepareAll on a chunk of 64 reports at N =
// 1024 bins, without and with the probability, ns/report per report.
func BenchmarkPrepareAll(b *testing.B) {
	const reports = 64
	for _, prob := range []bool{false, true} {
		f, nonces, shares := benchChunk(b, reports, prob)
		b.Run(fmt.Sprintf("m=%d", f.s.Components()), func(b *testing.B) {
			for b.Loop() {
				if _, err := f.srv[0].PrepareAll(nonces, shares); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reports), "ns/report")
		})
	}
}

// benchChunk returns a fixture at N = 1024 bins, with the probability
// if prob, and the leader's shares of n honest reports at random
// records, with their nonces: a chunk as the server walks it.
func benchChunk(b *testing.B, n int, prob bool) (*fixture, [][NonceSize]byte, []*Share) {
	f := newFixture(b, 1024, 9)
	if prob {
		f = newProbFixture(b, 1024, 9)
	}
	shares := make([]*Share, n)
	nonces := make([][NonceSize]byte, n)
	for i := range shares {
		r := f.encode(b, f.r.IntN(1024), i%2 == 0)
		sh, err := f.srv[0].DecodeShare(r.Shares[0])
		if err != nil {
			b.Fatal(err)
		}
		shares[i], nonces[i] = sh, r.Nonce
	}
	return f, nonces, shares
}
