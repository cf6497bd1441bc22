package mechanism

import (
	"encoding/binary"
	"math"
	"testing"
)

// RangeVariance(0, i) is PrefixVariance(i), and over many releases the
// sample variance of noise(b) − noise(a) lies within 5 standard errors
// of RangeVariance(a, b) (standard error from the sample's fourth
// moment; with 3000 releases it is ≈ 3 % of the variance, so a factor-2
// error, or summing the two prefixes' variances, is far outside).
func TestRangeVariance(t *testing.T) {
	const bins, releases = 64, 3000
	for _, p := range []Params{
		{Name: "tree", Bins: bins, Epsilon: 1},
		{Name: "kary", Bins: bins, Epsilon: 1},
		{Name: "cascade", Bins: bins, Epsilon: 1, Delta: 1e-6},
	} {
		m, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= bins; i++ {
			if got, want := RangeVariance(m, 0, i), m.PrefixVariance(i); math.Abs(got-want) > 1e-9*want {
				t.Fatalf("%s: RangeVariance(0, %d) = %v, PrefixVariance %v", m.Name(), i, got, want)
			}
		}
		ranges := [][2]int{{1, 2}, {31, 32}, {32, 33}, {7, 57}, {16, 48}, {63, 64}}
		samples := make([][]float64, len(ranges))
		for r := range releases {
			var seed [32]byte
			binary.LittleEndian.PutUint64(seed[:], uint64(r)+1)
			rel := m.NewRelease(seed)
			for k, ab := range ranges {
				samples[k] = append(samples[k], float64(rel.PrefixNoise(ab[1])-rel.PrefixNoise(ab[0])))
			}
		}
		for k, ab := range ranges {
			v, se := sampleVariance(samples[k])
			want := RangeVariance(m, ab[0], ab[1])
			if math.Abs(v-want) > 5*se {
				t.Errorf("%s: range (%d, %d]: sample variance %.2f ± %.2f, RangeVariance %.2f (sum of prefix variances %.2f)",
					m.Name(), ab[0], ab[1], v, se, want, m.PrefixVariance(ab[0])+m.PrefixVariance(ab[1]))
			}
		}
	}
}

// sampleVariance returns the sample variance of xs and its standard
// error sqrt((m4 − s⁴)/n).
func sampleVariance(xs []float64) (v, se float64) {
	n := float64(len(xs))
	var mean float64
	for _, x := range xs {
		mean += x / n
	}
	var m2, m4 float64
	for _, x := range xs {
		d := (x - mean) * (x - mean)
		m2 += d / n
		m4 += d * d / n
	}
	return m2 * n / (n - 1), math.Sqrt((m4 - m2*m2) / n)
}
