package experiment

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// TestOracleThresholds: the quantile grid puts about len/n scores in
// each bin, ends at the largest score, and merges tied quantiles.
func TestOracleThresholds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []float64
		n      int
		want   []float64
	}{
		{"even split", []float64{0.8, 0.1, 0.4, 0.3, 0.2, 0.6, 0.5, 0.7}, 4, []float64{0.2, 0.4, 0.6, 0.8}},
		{"uneven split", []float64{0.5, 0.1, 0.3, 0.2, 0.4}, 2, []float64{0.3, 0.5}},
		{"one bin", []float64{0.2, 0.9, 0.1}, 1, []float64{0.9}},
		{"ties merged", []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.9}, 3, []float64{0.1, 0.9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := oracleThresholds(tc.scores, tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("thresholds %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRocAccuracySeries: on small synthetic probabilities, every
// estimator kind (linear, oracle quantile grid, auto, the default: partitioned) gives a
// positive error at every ε, and the notes carry the noise-free error
// with roc.BinningFloor's prediction and, for the default, each vector's
// noise alone.
func TestRocAccuracySeries(t *testing.T) {
	cfg := tiny()
	s, l := syntheticProbabilities(3000, 0.117, cfg.Seed)
	d := rocScores{name: "small", scores: s, labels: l}
	var err error
	if d.truth, err = analysis.UnbinnedROC(s, l); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(18, 18))
	for _, m := range []rocMethod{{"kary", ecdf.Linear, 64, "l2", true, false}, {"kary", ecdf.Linear, 0, "l2", true, true}, {"auto", ecdf.Linear, 0, "l2", true, false}, rocDefault} {
		t.Run(m.String(), func(t *testing.T) {
			area, auc, notes, err := rocAccuracySeries(context.Background(), d, mechanism.ReplaceOne, m, 3, rng, progress{})
			if err != nil {
				t.Fatal(err)
			}
			for j := range area.Y {
				if !(area.Y[j] > 0) || !(auc.Y[j] >= 0) {
					t.Errorf("ε = %g: area error %g, AUC error %g", area.X[j], area.Y[j], auc.Y[j])
				}
			}
			all := strings.Join(notes, "\n")
			if !strings.Contains(all, "roc.BinningFloor") {
				t.Errorf("notes lack the floor prediction:\n%s", all)
			}
			if got := strings.Contains(all, "only the positives' vector noised"); got != (m == rocDefault) {
				t.Errorf("noise sources noted %v for %v:\n%s", got, m, all)
			}
		})
	}
}
