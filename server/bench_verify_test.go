package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/party"
)

// BenchmarkVerify measures the verification of one batch of verified
// reports of each verified backend, leader and helper in one process:
// ns/op is both servers' work per batch (divide by reports/op), and it
// reports the bytes the two servers exchange per report (Prepare,
// Prepared, Decide) and the upload bytes each server receives per report.
func BenchmarkVerify(b *testing.B) {
	const n = 64
	for _, backend := range verifiedBackends {
		for _, nbins := range []int{16, 1024} {
			b.Run(fmt.Sprintf("%s/bins=%d", backend, nbins), func(b *testing.B) {
				uploads := verifiedUploads(b, backend, nbins, n)
				var exchanged, uploaded int64
				for b.Loop() {
					b.StopTimer()
					p := newPairOf(b, Dataset{Name: "d", Backend: backend, Bins: nbins, Budget: ledger.Budget{Epsilon: 1}, MinReports: 1}, nil)
					for _, up := range uploads {
						if err := up(context.Background(), p.servers); err != nil {
							b.Fatal(err)
						}
					}
					before := p.net.Stats("leader")
					b.StartTimer()
					if err := p.leader.Verify(context.Background()); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					after := p.net.Stats("leader")
					exchanged = after.BytesSent + after.BytesReceived - before.BytesSent - before.BytesReceived
					uploaded = before.BytesReceived
					b.StartTimer()
				}
				b.ReportMetric(n, "reports/op")
				b.ReportMetric(float64(exchanged)/n, "exchange-B/report")
				b.ReportMetric(float64(uploaded)/n, "leader-upload-B/report")
			})
		}
	}
}

// verifiedUploads makes n honest parties' verified reports of backend
// over nbins bins, once, and returns their uploads.
func verifiedUploads(b *testing.B, backend Backend, nbins, n int) []func(context.Context, party.Servers) error {
	g, _ := ecdf.NewLinearGrid(0, 1, nbins)
	uploads := make([]func(context.Context, party.Servers) error, n)
	for k := range uploads {
		q, err := party.New(party.Instance{Score: float64(k) / float64(n), Label: k % 2}, g)
		if err != nil {
			b.Fatal(err)
		}
		if backend == Additive {
			r, err := q.VerifiedReport(nil)
			if err != nil {
				b.Fatal(err)
			}
			uploads[k] = func(ctx context.Context, s party.Servers) error { return party.Upload(ctx, s, r) }
			continue
		}
		r, err := q.VerifiedKeys(false, nil)
		if err != nil {
			b.Fatal(err)
		}
		uploads[k] = func(ctx context.Context, s party.Servers) error { return party.Upload(ctx, s, r) }
	}
	return uploads
}
