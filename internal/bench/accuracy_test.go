package bench

import (
	"math"
	"testing"
)

// TestAccuracy runs a small benchmark: the Monte-Carlo MSE of every
// mechanism is within 5 standard errors of its exact mean variance, and
// the ratios are taken to tree.
func TestAccuracy(t *testing.T) {
	cfg := AccuracyConfig{Bins: []int{64}, Epsilons: []float64{1}, Delta: 1e-6,
		Mechanisms: []string{"tree", "kary", "cascade", "gaussian-tree"}, Runs: 200, MaxPrefixes: 32, Seed: 7}
	rows, err := Accuracy(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].VarianceRatio != 1 || rows[0].MSERatio != 1 || rows[0].Prefixes != 32 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if math.Abs(r.ZScore) > 5 {
			t.Errorf("%s: MC MSE %.1f ± %.1f, exact %.1f", r.Mechanism, r.MSE, r.MSEStdErr, r.MeanVariance)
		}
		if r.MaxVariance < r.MeanVariance || r.MaxError <= 0 {
			t.Errorf("%s: max variance %v below mean %v or max error %v", r.Mechanism, r.MaxVariance, r.MeanVariance, r.MaxError)
		}
		if want := r.MeanVariance / rows[0].MeanVariance; r.VarianceRatio != want {
			t.Errorf("%s: variance ratio %v, want %v", r.Mechanism, r.VarianceRatio, want)
		}
	}
	if _, err := Accuracy(AccuracyConfig{Runs: 1, Mechanisms: []string{"tree"}}, nil); err == nil {
		t.Error("one run accepted")
	}
	if _, err := Accuracy(AccuracyConfig{Runs: 5, Mechanisms: []string{"kary"}}, nil); err == nil {
		t.Error("a reference other than tree accepted")
	}
}
