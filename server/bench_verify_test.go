package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/party"
)

// BenchmarkVerify measures the verification of one batch of verified
// reports at 1024 bins, leader and helper in one process: ns/op is both
// servers' work per batch (divide by reports/op), and it reports the
// bytes the two servers exchange per report (Prepare, Prepared, Decide)
// and the upload bytes each server receives per report.
func BenchmarkVerify(b *testing.B) {
	const n = 64
	for _, nbins := range []int{16, 1024} {
		b.Run(fmt.Sprintf("bins=%d", nbins), func(b *testing.B) {
			g, _ := ecdf.NewLinearGrid(0, 1, nbins)
			reports := make([]verify.Report, n)
			for k := range reports {
				q, err := party.New(party.Instance{Score: float64(k) / n, Label: k % 2}, g)
				if err != nil {
					b.Fatal(err)
				}
				if reports[k], err = q.VerifiedReport(nil); err != nil {
					b.Fatal(err)
				}
			}
			var exchanged, uploaded int64
			for b.Loop() {
				b.StopTimer()
				p := newPairOf(b, Dataset{Name: "d", Backend: Additive, Bins: nbins, Budget: ledger.Budget{Epsilon: 1}, MinReports: 1}, nil)
				for _, r := range reports {
					if err := party.UploadReport(context.Background(), p.servers, r); err != nil {
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
