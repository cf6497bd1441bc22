package smooth

import (
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// BenchmarkSmooth reports ns per point of each method on a tree release of
// X_pois(3) at ε = 1, for N = 2^10 … 2^16.
func BenchmarkSmooth(b *testing.B) {
	for _, logN := range []int{10, 12, 14, 16} {
		n := 1 << logN
		hist, err := ecdf.PoissonHistogram(3, n, 1)
		if err != nil {
			b.Fatal(err)
		}
		m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: n, Epsilon: 1})
		if err != nil {
			b.Fatal(err)
		}
		p, err := ecdf.NewPrivate(m, hist, noise.Seed{byte(logN)})
		if err != nil {
			b.Fatal(err)
		}
		raw := p.Curve()
		for _, method := range Methods[1:] {
			b.Run(fmt.Sprintf("%s/N=2^%d", method, logN), func(b *testing.B) {
				for b.Loop() {
					if _, err := Apply(method, raw, m); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
			})
		}
	}
}
