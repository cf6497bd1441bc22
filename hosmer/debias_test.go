package hosmer

import (
	"math"
	"math/rand/v2"
	"testing"
)

// With Gaussian noise of variance V_g added to each group's O_1 (E fixed),
// the mean of DebiasedStatistic over many draws is H within 5 standard
// errors (H ≈ 52, so the maximum with 0 never binds), while the plain statistic is biased upward by Σ V_g(1/E_1 +
// 1/E_0) — here more than 20 standard errors, so a missing or doubled
// correction fails.
func TestDebiasedStatisticUnbiased(t *testing.T) {
	groups := []Group{
		{First: 1, Last: 3, Size: 300, Positives: 30, Expected: 10},
		{First: 4, Last: 6, Size: 300, Positives: 60, Expected: 45},
		{First: 7, Last: 9, Size: 300, Positives: 130, Expected: 150},
	}
	h, err := Statistic(groups)
	if err != nil {
		t.Fatal(err)
	}
	v := []float64{25, 36, 49}
	var bias float64
	for k, g := range groups {
		bias += v[k] * (1/g.Expected + 1/(g.Size-g.Expected))
	}
	r := rand.New(rand.NewPCG(1, 2))
	const draws = 20000
	var sum, sumSq, plain float64
	noisy := make([]Group, len(groups))
	for range draws {
		for k, g := range groups {
			g.Positives += math.Sqrt(v[k]) * r.NormFloat64()
			noisy[k] = g
		}
		d, err := DebiasedStatistic(noisy, v)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := Statistic(noisy)
		sum, sumSq, plain = sum+d, sumSq+d*d, plain+p
	}
	mean := sum / draws
	se := math.Sqrt((sumSq/draws - mean*mean) / draws)
	if math.Abs(mean-h) > 5*se {
		t.Errorf("debiased mean %.3f ± %.3f, H = %.3f", mean, se, h)
	}
	if got := plain/draws - h; math.Abs(got-bias) > 5*se || bias < 20*se {
		t.Errorf("plain statistic biased by %.3f, want %.3f (s.e. %.3f)", got, bias, se)
	}
	if _, err := DebiasedStatistic(groups, v[:2]); err == nil {
		t.Error("2 variances for 3 groups accepted")
	}
}

func TestDebiasNeedsNoiseSource(t *testing.T) {
	_, bins, labels, probs := data(200, 16, 3)
	_, err := Private(newExactSource(bins, labels, probs, 16), Config{Bins: 16, Reports: 200, Debias: true})
	if err == nil {
		t.Error("Debias without noise variances accepted")
	}
}
