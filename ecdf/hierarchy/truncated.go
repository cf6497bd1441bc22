package hierarchy

import (
	"math"
	"math/big"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// truncatedLaplace is TLap_Z(t, A): the discrete Laplace law Lap_Z(t)
// conditioned on |X| ≤ A, P(X = k) = r^|k|/Z for |k| ≤ A, r = e^{−1/t},
// Z = (1 + r − 2r^{A+1})/(1 − r). Sample draws Lap_Z(t) from package
// noise and rejects until |X| ≤ A: each accepted value has exactly that
// law (rejection keeps the ratios of the accepted points).
type truncatedLaplace struct {
	lap   *noise.DiscreteLaplace
	limit int64 // A
}

// newTruncatedLaplace returns TLap_Z(t, A) with t ≥ 1/eps (noise.RoundUpScale)
// and A the least integer with tlapDelta(t, A) ≤ delta: shifting the
// input by one changes the output law by at most (eps, delta) (doc.go,
// Lemma 2.8 made discrete).
func newTruncatedLaplace(eps, delta float64) (truncatedLaplace, error) {
	lap, err := laplaceFor(eps)
	if err != nil {
		return truncatedLaplace{}, err
	}
	t := lap.Scale()
	// δ(A) falls like r^A: start from the continuous solution and walk.
	a := int64(max(0, math.Floor(t*math.Log(1/delta))-2))
	for tlapDelta(t, a) > delta*(1-1e-9) {
		a++
	}
	for a > 0 && tlapDelta(t, a-1) <= delta*(1-1e-9) {
		a--
	}
	return truncatedLaplace{lap: lap, limit: a}, nil
}

// laplaceFor returns Lap_Z(t) with the least representable t ≥ 1/eps.
func laplaceFor(eps float64) (*noise.DiscreteLaplace, error) {
	target := new(big.Rat).Quo(big.NewRat(1, 1), new(big.Rat).SetFloat64(eps))
	return noise.NewDiscreteLaplace(noise.RoundUpScale(target))
}

// tlapDelta is P(X = −A) for X ~ TLap_Z(t, A): the mass that the law of
// y + X has where that of y + 1 + X has none, the δ of a unit shift.
func tlapDelta(t float64, a int64) float64 {
	r := math.Exp(-1 / t)
	q := -math.Expm1(-1 / t) // 1 − r
	ra := math.Exp(-float64(a) / t)
	return ra * q / (1 + r - 2*r*ra)
}

// drawNoise draws one discrete Laplace noise of a release with fixed
// work (noise.SampleFixed): every draw of counting-on-trees' one stream
// computes the same keystream whatever its value, except with
// probability at most 2^−40, and leaves the stream where the sampler
// alone would, so releases are unchanged value for value. A variable
// only so that tests can watch the draws.
var drawNoise = noise.SampleFixed

// sampleFixed draws one value as Sample does, each discrete Laplace
// draw with fixed work (drawNoise). A draw outside ±A is drawn again:
// how many draws that takes is independent of the value returned
// (rejection sampling), so its time tells nothing about it.
func (d truncatedLaplace) sampleFixed(src noise.Source) int64 {
	for {
		if x := drawNoise(d.lap, src); x >= -d.limit && x <= d.limit {
			return x
		}
	}
}

// Sample draws one value.
func (d truncatedLaplace) Sample(src noise.Source) int64 {
	for {
		if x := d.lap.Sample(src); x >= -d.limit && x <= d.limit {
			return x
		}
	}
}
