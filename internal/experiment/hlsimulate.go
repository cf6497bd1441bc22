package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fedecdf/fedecdf/simulate"
)

// HLSimulate measures issue 15's done-when criterion on the command
// itself: the share of `fedecdf simulate` runs on calibrated data whose
// Hosmer–Lemeshow test rejects at α = 0.05. For each size n
// (cfg.HLSizes), the built-in table is scored as simulate does by
// default (simulate.LoadData of simulate.DefaultConfig with n parties:
// the logistic regression's test-set probabilities p); each of cfg.Runs
// runs draws fresh labels y ~ Bernoulli(p) — the model is calibrated on
// them by construction — writes them with p to a CSV file and calls
// simulate.Run as `fedecdf simulate --input FILE --score-column score --label-column
// label --interval-draws 0` does (every other setting simulate's
// default: ε = 1, a quarter on the ECDF, the roc allocation, B =
// hosmer.DefaultNullDraws, dcf backend, two servers). --interval-draws 0
// leaves out the ECDF band and AUC intervals, which the test does not
// use. The figure reports, per n, the rejection rate of the noise-aware
// p-value, the naive χ² on the private H and the non-private χ², with
// binomial standard errors.
func HLSimulate(ctx context.Context, cfg Config) (*Figure, error) {
	cfg = cfg.withDefaults()
	dir, err := os.MkdirTemp("", "fedecdf-hl-simulate")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fig := &Figure{
		ID: "hl-simulate", Title: "fedecdf simulate on calibrated data: Hosmer–Lemeshow rejection rate at α = 0.05",
		XLabel: "n", YLabel: "rejection rate", LogX: true, Runs: cfg.Runs,
		Notes: []string{
			"data: the built-in table's test-set probabilities p (simulate's default scoring), labels redrawn y ~ Bernoulli(p) per run",
			"each run: simulate.Run as `fedecdf simulate --input FILE --score-column score --label-column label --interval-draws 0`, otherwise simulate's defaults",
		},
	}
	series := []Series{{Name: hlTests[0]}, {Name: hlTests[1]}, {Name: hlTests[2]}}
	pr := progress{cfg.Progress}
	pr.start("hl-simulate", len(cfg.HLSizes)*cfg.Runs)
	defer pr.finish()
	for si, n := range cfg.HLSizes {
		rej, b, err := hlSimulateRuns(ctx, cfg, n, uint64(si), filepath.Join(dir, "calibrated.csv"), pr)
		if err != nil {
			return nil, fmt.Errorf("n = %d: %w", n, err)
		}
		for t := range series {
			rate := float64(rej[t]) / float64(cfg.Runs)
			s := &series[t]
			s.X, s.Y, s.StdErr = append(s.X, float64(n)), append(s.Y, rate), append(s.StdErr, math.Sqrt(rate*(1-rate)/float64(cfg.Runs)))
		}
		fig.Notes = append(fig.Notes, fmt.Sprintf("n = %d: B = %d bootstrap draws per run", n, b))
	}
	fig.Series = series
	return fig, nil
}

// hlSimulateRuns runs cfg.Runs simulations of n parties on calibrated
// labels written to path and counts the rejections of each of hlTests;
// b is the runs' bootstrap B.
func hlSimulateRuns(ctx context.Context, cfg Config, n int, si uint64, path string, pr progress) (rej [3]int, b int, err error) {
	base := simulate.DefaultConfig()
	base.Parties = n
	data, err := simulate.LoadData(base)
	if err != nil {
		return rej, 0, err
	}
	run := base
	run.Data, run.ScoreCol, run.LabelCol, run.Parties, run.IntervalDraws = path, "score", "label", 0, -1
	for k := range cfg.Runs {
		if err := ctx.Err(); err != nil {
			return rej, 0, err
		}
		r := rand.New(rand.NewPCG(cfg.Seed+si<<32, uint64(k)))
		if err := writeCalibrated(path, data.Scores, r); err != nil {
			return rej, 0, err
		}
		rep, err := simulate.Run(ctx, run)
		if err != nil {
			return rej, 0, fmt.Errorf("run %d: %w", k+1, err)
		}
		h := rep.Hosmer
		if h == nil || h.Undefined != "" {
			return rej, 0, fmt.Errorf("run %d: no Hosmer–Lemeshow test (%+v)", k+1, h)
		}
		b = h.BootstrapDraws
		for t, p := range []*float64{h.PValuePrivate, h.PValueNaive, h.PValueTrue} {
			if p != nil && *p <= hlAlpha {
				rej[t]++
			}
		}
		pr.add()
	}
	return rej, b, nil
}

// writeCalibrated writes the CSV columns score = p and label ~
// Bernoulli(p) for each of probs into path.
func writeCalibrated(path string, probs []float64, r *rand.Rand) error {
	var sb strings.Builder
	sb.WriteString("score,label\n")
	for _, p := range probs {
		y := "0"
		if r.Float64() < p {
			y = "1"
		}
		sb.WriteString(strconv.FormatFloat(p, 'g', -1, 64) + "," + y + "\n")
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}
