package noise

import (
	"math"
	"math/big"
	"testing"
)

// secondMomentZ returns the sample second moment m2 = (1/n) Σ x² of
// draws from a distribution symmetric about 0 (so m2 estimates the
// variance), and the z-score (m2 − want)/se with the standard error
// se = √((m4 − m2²)/n) taken from the sample fourth moment m4.
func secondMomentZ(draws []int64, want float64) (m2, se, z float64) {
	var m4 float64
	for _, x := range draws {
		xx := float64(x) * float64(x)
		m2 += xx
		m4 += xx * xx
	}
	n := float64(len(draws))
	m2, m4 = m2/n, m4/n
	se = math.Sqrt((m4 - m2*m2) / n)
	return m2, se, (m2 - want) / se
}

// TestDiscreteLaplaceVarianceFromSeedStreams draws Lap_Z(t) as the
// mechanisms draw node noise, the first sample of a fresh ChaCha20
// stream Seed.Stream(domain, i) per draw, and checks that the sample
// variance matches Variance() = 2r/(1 − r)², r = e^{−1/t}, within 5
// standard errors (about ±2.5 % at 200 000 draws). Scale 1.6 was the
// tree's node scale (L + 1)/ε at N = 2^15, ε = 10 (EXPERIMENTS.md,
// Fig. 4; with the tight replace-one Δ = L it is now 1.5). The same draws must reject Lap_Z(2t), and, where the discrete
// correction 2t² − Variance() ≈ 1/6 is at least 10 expected standard
// errors, the continuous Laplace variance 2t².
func TestDiscreteLaplaceVarianceFromSeedStreams(t *testing.T) {
	const draws = 200000
	seed := Seed{0x16, 0x0a}
	for k, scale := range []float64{1.6, 1, 0.5, 3.7} {
		d, err := NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]int64, draws)
		for i := range x {
			x[i] = d.Sample(seed.Stream(uint32(k), uint64(i)))
		}
		want := d.Variance()
		m2, se, z := secondMomentZ(x, want)
		t.Logf("scale %v: sample variance %.4f ± %.4f, Variance() %.4f (z = %.2f), continuous 2t² %.4f",
			scale, m2, se, want, z, 2*scale*scale)
		if math.Abs(z) > 5 {
			t.Errorf("scale %v: sample variance %.4f is %.2f standard errors (%.4f) from Variance() = %.4f",
				scale, m2, z, se, want)
		}
		doubled, err := NewDiscreteLaplace(2 * scale)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, z := secondMomentZ(x, doubled.Variance()); math.Abs(z) < 5 {
			t.Errorf("scale %v: draws also fit Lap_Z(%v) (z = %.2f): the test has no power", scale, 2*scale, z)
		}
		continuous := 2 * scale * scale
		if (continuous-want)/se >= 10 {
			if _, _, z := secondMomentZ(x, continuous); math.Abs(z) < 5 {
				t.Errorf("scale %v: draws also fit the continuous variance 2t² = %v (z = %.2f)", scale, continuous, z)
			}
		}
	}
}

// TestScaleBinaryFractionIsNegligible checks that reading the float64
// scale 1.6 = 16/10 as its exact binary fraction num/den changes the
// scale by at most one unit in the last place, so the variance by a
// relative 2^−51 at most (d log Var/d log t ≤ 2): far below any
// Monte-Carlo resolution.
func TestScaleBinaryFractionIsNegligible(t *testing.T) {
	d, err := NewDiscreteLaplace(16.0 / 10)
	if err != nil {
		t.Fatal(err)
	}
	exact := new(big.Rat).SetFrac(new(big.Int).SetUint64(d.num), new(big.Int).SetUint64(d.den))
	rel, _ := new(big.Rat).Quo(new(big.Rat).Sub(exact, big.NewRat(8, 5)), big.NewRat(8, 5)).Float64()
	t.Logf("scale 1.6 is read as %v/%v, relative error %.3g", d.num, d.den, rel)
	if math.Abs(rel) > 0x1p-52 {
		t.Errorf("scale 1.6 is read as %v/%v, a relative error %.3g above 2^−52", d.num, d.den, rel)
	}
}
