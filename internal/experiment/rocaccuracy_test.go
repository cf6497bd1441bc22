package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
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
// estimator kind (linear, oracle quantile grid, partitioned, the default) gives a
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
	for _, m := range []rocMethod{{"kary", ecdf.Linear, 64, "l2", true, false, false}, {"kary", ecdf.Linear, 0, "l2", true, true, false}, {"auto", ecdf.Linear, 0, "l2", true, false, true}, rocDefault} {
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

// TestPartitionBins: a sixth of the grid at each end, the rest between.
func TestPartitionBins(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []int
	}{{2, []int{2}}, {3, []int{1, 1, 1}}, {12, []int{2, 8, 2}}, {38, []int{7, 24, 7}}, {151, []int{26, 99, 26}}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			if got := partitionBins(tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("parts %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPartitionResultVariance: the noise a partitioned release adds to prefix i
// has the variance of its own part's prefix plus the totals of the parts
// before it (independent parts), under both relations. The sample
// variance of R draws has standard error at most σ²·√((κ − 1)/R) for
// noise of kurtosis κ ≤ 6 (the Laplace law's; sums of independent
// Laplace nodes have less), and the test allows 4 of them.
func TestPartitionResultVariance(t *testing.T) {
	const draws = 4000
	rng := rand.New(rand.NewPCG(18, 6))
	for _, rel := range []mechanism.Relation{mechanism.AddRemove, mechanism.ReplaceOne} {
		t.Run(rel.String(), func(t *testing.T) {
			r, err := aggregation.NewRelease(payload.ReleaseID{}, rocSpec(rocMethod{mechanism: "auto", bins: 12}, 1, rel), 100, 1)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := partitionMechanisms(r, aggregation.Label)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, 0, 12)
			var before float64
			for _, m := range parts {
				if m.Epsilon() != r.Mechanism(aggregation.Label).Epsilon() || m.Relation() != mechanism.AddRemove {
					t.Fatalf("part %s at ε %g, %v; want the component's ε %g, add/remove", m.Name(), m.Epsilon(), m.Relation(), r.Mechanism(aggregation.Label).Epsilon())
				}
				for i := 1; i <= m.Bins(); i++ {
					want = append(want, before+m.PrefixVariance(i))
				}
				before += m.PrefixVariance(m.Bins())
			}
			truth := make([]float64, 12)
			sum, sum2 := make([]float64, 12), make([]float64, 12)
			for range draws {
				res := partitionResult(r, aggregation.Label, truth, parts, rng)
				for j, v := range res.Sums {
					sum[j] += float64(v)
					sum2[j] += float64(v) * float64(v)
				}
			}
			for j := range want {
				mean := sum[j] / draws
				got := sum2[j]/draws - mean*mean
				if tol := 4 * want[j] * math.Sqrt(5.0/draws); math.Abs(got-want[j]) > tol {
					t.Errorf("prefix %d: noise variance %g, want %g ± %g", j+1, got, want[j], tol)
				}
			}
		})
	}
}
