package server

import (
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
)

// BenchmarkAcceptedDigest measures what keeping each accepted upload's
// digest (heldReports) adds to an unverified dcf server's ingestion:
// "digest" is uploadDigest of one upload, "fold" the full-domain
// evaluation of its key that ingestion does anyway (folded.eval, in
// chunks of walkKeys keys), both per report; their ratio is the
// digest's share of the work. The verified backends hashed every upload
// before this (their verdict records keep the digest).
func BenchmarkAcceptedDigest(b *testing.B) {
	for _, nbins := range []int{16, 1024} {
		g, _ := ecdf.NewLinearGrid(0, 1, nbins)
		ups := make([]*protocol.Upload, walkKeys)
		keys := make([]*fss.Key, walkKeys)
		for k := range ups {
			q, err := party.New(party.Instance{Score: float64(k) / walkKeys, Label: k % 2}, g)
			if err != nil {
				b.Fatal(err)
			}
			key, _, err := q.DCFKeys(nil)
			if err != nil {
				b.Fatal(err)
			}
			ups[k] = &protocol.Upload{Dataset: "d", Report: q.ReportID(), Key: key}
			if keys[k], err = fss.Decode(key); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("digest/bins=%d", nbins), func(b *testing.B) {
			for b.Loop() {
				for _, up := range ups {
					uploadDigest(up)
				}
			}
			b.ReportMetric(float64(len(ups[0].Key)), "key-B")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*walkKeys), "ns/report")
		})
		b.Run(fmt.Sprintf("fold/bins=%d", nbins), func(b *testing.B) {
			f, err := newFolded(nbins)
			if err != nil {
				b.Fatal(err)
			}
			acc := make([]uint64, nbins*payload.NumComponents)
			for b.Loop() {
				if err := f.eval(keys, acc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*walkKeys), "ns/report")
		})
	}
}
