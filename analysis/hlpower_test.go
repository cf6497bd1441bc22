package analysis

import (
	"math"
	"testing"

	"github.com/fedecdf/fedecdf/hosmer"
)

// minShift against theory: one group without noise is a one-degree test
// |Z + μ| > 1.96 with 80 % power at μ ≈ 1.96 + 0.8416 = 2.8016 (the other
// tail adds < 10⁻⁵); the Monte-Carlo s.e. of that point is about
// √(0.16/4000)/φ(0.84) ≈ 0.022, so 0.1 is 4.5 s.e. Multiplying the noise
// variance by k multiplies the detectable μ by √k exactly (common
// draws): a factor-2 mistake in the noise law shows as a factor √2.
func TestMinShift(t *testing.T) {
	linear := func(a float64) []float64 { return []float64{a} }
	got := minShift([]float64{1}, linear, 1)
	if math.Abs(got-2.8016) > 0.1 {
		t.Errorf("one group: detectable μ %.4f, want 2.8016 ± 0.1", got)
	}
	for _, k := range []float64{2, 9} {
		if g := minShift([]float64{k}, linear, 1); math.Abs(g/got-math.Sqrt(k)) > 1e-3 {
			t.Errorf("noise ×%v: detectable μ %.4f, want √%v × %.4f", k, g, k, got)
		}
	}
}

// hosmerPower: more noise, larger detectable shift; a weak test is
// flagged; with noise that swamps the groups no shift is detectable.
func TestHosmerPower(t *testing.T) {
	groups := make([]hosmer.Group, 10)
	for g := range groups {
		m := 0.05 + 0.09*float64(g)
		groups[g] = hosmer.Group{Size: 1000, Expected: 1000 * m}
	}
	sampling := func(noise float64) []float64 {
		sd := make([]float64, len(groups))
		for g, gr := range groups {
			m := gr.Expected / gr.Size
			sd[g] = math.Sqrt(gr.Size*m*(1-m) + noise*noise)
		}
		return sd
	}
	quiet, noisy, swamped := hosmerPower(groups, sampling(0)), hosmerPower(groups, sampling(100)), hosmerPower(groups, sampling(1e5))
	if quiet.InterceptShift == nil || noisy.InterceptShift == nil {
		t.Fatalf("no detectable shift: %+v %+v", quiet, noisy)
	}
	if !(*quiet.InterceptShift < *noisy.InterceptShift) || quiet.Weak || !noisy.Weak {
		t.Errorf("shift %.3g (weak %v) without noise, %.3g (weak %v) with noise s.d. 100", *quiet.InterceptShift, quiet.Weak, *noisy.InterceptShift, noisy.Weak)
	}
	if math.Abs(quiet.NoiseInflation-1) > 1e-12 {
		t.Errorf("noise inflation %v without noise, want 1", quiet.NoiseInflation)
	}
	if swamped.InterceptShift != nil || !swamped.Weak {
		t.Errorf("noise s.d. 10⁵: %+v, want no detectable shift, weak", swamped)
	}
}
