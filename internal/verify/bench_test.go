package verify

import (
	crand "crypto/rand"
	"fmt"
	"testing"
)

// BenchmarkReport measures, at 1024 bins (2048 buckets), one party's
// sharding and each server's preparation and decision, and reports the
// upload size and the verifier message each server sends; and each
// server's re-derivation of an accepted report's output share, what a
// restart costs per report.
func BenchmarkReport(b *testing.B) {
	for _, bins := range []int{16, 1024} {
		f := newFixture(b, bins)
		r := f.encode(b, bins/3, true)
		b.Run(fmt.Sprintf("bins=%d/shard", bins), func(b *testing.B) {
			for b.Loop() {
				if _, err := f.s.Encode(bins/3, true, crand.Reader); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(NonceSize+len(r.Public)+len(r.Shares[0])+len(r.Shares[1])), "upload-B")
			b.ReportMetric(float64(len(r.Shares[0])), "leader-B")
			b.ReportMetric(float64(len(r.Shares[1])), "helper-B")
		})
		for i, srv := range []*Server{f.leader, f.helper} {
			_, peer, err := [2]*Server{f.leader, f.helper}[1-i].Prepare(r.Nonce, r.Public, r.Shares[1-i])
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("bins=%d/server=%d/prepare+finish", bins, i), func(b *testing.B) {
				for b.Loop() {
					p, _, err := srv.Prepare(r.Nonce, r.Public, r.Shares[i])
					if err != nil {
						b.Fatal(err)
					}
					if _, err := srv.Finish(p, peer); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(peer)), "verifier-msg-B")
			})
			b.Run(fmt.Sprintf("bins=%d/server=%d/rederive", bins, i), func(b *testing.B) {
				for b.Loop() {
					if _, err := srv.Rederive(r.Nonce, r.Public, r.Shares[i]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
