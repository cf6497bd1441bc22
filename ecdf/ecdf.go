package ecdf

import (
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// Histogram counts the instances in each bin: h[i−1] = |{j : bins[j] = i}|
// for i = 1..nBins. A bin outside [1, nBins] is an error naming its position.
func Histogram(bins []int, nBins int) ([]int64, error) {
	if nBins < 1 {
		return nil, fmt.Errorf("ecdf: number of bins %d is not positive", nBins)
	}
	h := make([]int64, nBins)
	for j, b := range bins {
		if b < 1 || b > nBins {
			return nil, fmt.Errorf("ecdf: instance #%d: bin %d is not in [1, %d]", j+1, b, nBins)
		}
		h[b-1]++
	}
	return h, nil
}

// PrefixCounts returns the prefix counts c_i = h_1 + … + h_i, i = 1..N, of a
// histogram: c_i is the number of instances x with x ≤ τ_i.
func PrefixCounts(hist []int64) []int64 {
	c := make([]int64, len(hist))
	var sum int64
	for i, h := range hist {
		sum += h
		c[i] = sum
	}
	return c
}

// ECDF returns the exact, non-private ECDF at the thresholds,
// F(τ_i) = c_i/n with n = c_N (dp-ecdf Definition 3). An empty histogram
// gives NaN values.
func ECDF(hist []int64) []float64 {
	c := PrefixCounts(hist)
	f := make([]float64, len(c))
	if len(c) == 0 {
		return f
	}
	n := float64(c[len(c)-1])
	for i, ci := range c {
		f[i] = float64(ci) / n
	}
	return f
}

// Private is one differentially private release of an ECDF over N bins:
// the noisy prefix counts ĉ_i = c_i + η(i), where η(i) = PrefixNoise(i) is
// the integer noise a mechanism adds to prefix i (for the tree mechanism,
// the path sum of dp-ecdf Eq. 2), and the private ECDF
//
//	F̂(τ_i) = ĉ_i / n.
//
// The noise is fixed by the release seed, so every value may be queried
// any number of times at no further privacy cost, and all N values
// together are (ε, δ)-DP under the mechanism's neighbouring relation.
//
// The normaliser n is the public number of instances under the
// replace-one relation (dp-ecdf §2). Under add/remove the number of
// instances is itself private, so n is the noisy total ĉ_N instead, a
// post-processing of the same release, raised to 1 if noise drove it
// below (Normaliser). F̂ is neither clipped to [0, 1] nor made monotone:
// that is the job of smoothing (dp-ecdf §3.2).
//
// A Private holds the exact counts, so it belongs to whoever holds the
// data (the curator); only its outputs are private.
type Private struct {
	mech    mechanism.Mechanism
	prefix  []int64
	release mechanism.Release
	total   Normaliser
}

// NewPrivate releases the ECDF of the histogram hist (instances per bin,
// see Histogram) with mechanism m, whose noise is derived from seed. The
// histogram must have m.Bins() bins. Each call with a fresh seed (see
// noise.NewSeed) spends the mechanism's privacy budget once.
func NewPrivate(m mechanism.Mechanism, hist []int64, seed noise.Seed) (*Private, error) {
	if len(hist) != m.Bins() {
		return nil, fmt.Errorf("ecdf: histogram has %d bins but mechanism %s is set up for %d", len(hist), m.Name(), m.Bins())
	}
	for i, h := range hist {
		if h < 0 {
			return nil, fmt.Errorf("ecdf: bin %d has a negative count %d", i+1, h)
		}
	}
	p := &Private{mech: m, prefix: PrefixCounts(hist), release: m.NewRelease(seed)}
	var err error
	if p.total, err = NewNormaliser(m.Relation(), p.prefix[len(p.prefix)-1], p.count(p.Bins())); err != nil {
		return nil, err
	}
	return p, nil
}

// Mechanism returns the mechanism of the release.
func (p *Private) Mechanism() mechanism.Mechanism { return p.mech }

// Bins returns N.
func (p *Private) Bins() int { return len(p.prefix) }

// Normaliser returns the normaliser n of F̂ — the public number of
// instances under replace-one, the noisy total ĉ_N (at least 1) under
// add/remove — with what may be said of it (public or noisy, raised to 1
// or not).
func (p *Private) Normaliser() Normaliser { return p.total }

// count returns the noisy prefix count ĉ_i = c_i + η(i), 1 ≤ i ≤ N; like
// value and Grid.Threshold it panics for other i, as an out-of-range
// index does.
func (p *Private) count(i int) int64 {
	return p.prefix[i-1] + p.release.PrefixNoise(i)
}

// value returns F̂(τ_i) = ĉ_i/n, 1 ≤ i ≤ N (raw: not clipped to [0, 1]).
func (p *Private) value(i int) float64 {
	return float64(p.count(i)) / float64(p.total.N)
}

// Curve returns F̂(τ_1), …, F̂(τ_N).
func (p *Private) Curve() []float64 {
	f := make([]float64, p.Bins())
	for i := range f {
		f[i] = p.value(i + 1)
	}
	return f
}

// MeanStdDev returns √(mean_i Var(η(i)))/n, the root mean squared error
// of F̂ over the thresholds.
func (p *Private) MeanStdDev() float64 {
	return math.Sqrt(p.mech.MeanVariance()) / float64(p.total.N)
}
