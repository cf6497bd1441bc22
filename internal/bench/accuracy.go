package bench

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// AccuracyConfig describes one accuracy benchmark: every mechanism of
// Mechanisms at every (N, ε), with δ for the approximate ones.
type AccuracyConfig struct {
	Bins       []int
	Epsilons   []float64
	Delta      float64 // δ of cascade, gaussian-tree
	Relation   mechanism.Relation
	Mechanisms []string // names for mechanism.New; "tree" first (the reference)
	Runs       int      // releases per mechanism
	// MaxPrefixes bounds the prefixes evaluated per release: when N is
	// larger, each release is evaluated at MaxPrefixes prefixes drawn
	// uniformly (with replacement) by the simulation RNG, so the MSE stays
	// unbiased and the "max error" is the max over that sample.
	MaxPrefixes int
	Seed        uint64 // simulation RNG (release seeds, sampled prefixes)
	// Alphas, when not empty, adds the α-mRMSE of node counts and prefix
	// sums at each α (AccuracyRow.Alpha) on X_pois(1) over the N bins,
	// from Runs further releases drawn from their own generator (Seed).
	Alphas []float64
}

// AccuracyRow is the accuracy of one mechanism at one (N, ε).
type AccuracyRow struct {
	Bins         int     `json:"bins"`
	Epsilon      float64 `json:"epsilon"`
	Delta        float64 `json:"delta"`
	Mechanism    string  `json:"mechanism"`
	MeanVariance float64 `json:"mean_variance"` // exact mean prefix variance
	MaxVariance  float64 `json:"max_variance"`  // exact max prefix variance
	Runs         int     `json:"runs"`
	Prefixes     int     `json:"prefixes_per_release"` // N, or the sample size
	MSE          float64 `json:"mc_mse"`               // Monte-Carlo mean squared error
	MSEStdErr    float64 `json:"mc_mse_stderr"`        // from the spread over releases
	ZScore       float64 `json:"mc_z"`                 // (MSE − MeanVariance)/MSEStdErr
	MaxError     float64 `json:"mc_mean_max_error"`    // mean over releases of max |noise|
	// Ratios to the tree mechanism at the same (N, ε), measured in the
	// same run (the exact ones are exact).
	VarianceRatio float64 `json:"mean_variance_ratio"`
	MSERatio      float64 `json:"mc_mse_ratio"`
	MaxErrorRatio float64 `json:"mc_max_error_ratio"`
	// SmoothedMSE maps "lambda=1", "lambda=3" to the Monte-Carlo MSE per
	// prefix after pointwise p = 2 smoothing of releases on X_pois(λ), when
	// measured (filled by the caller: smoothing lives above this package).
	SmoothedMSE map[string]float64 `json:"smoothed_mse,omitempty"`
	// Alpha is the α-mRMSE at each α of AccuracyConfig.Alphas, measured
	// on the data AlphaData with smoothing factor Tau.
	Alpha     []AlphaError `json:"alpha_mrmse,omitempty"`
	AlphaData string       `json:"alpha_data,omitempty"`
	Tau       float64      `json:"smoothing_tau,omitempty"`
	// Params rebuilds the mechanism measured (mechanism.New(Params)).
	Params mechanism.Params `json:"-"`
}

// Accuracy runs cfg, writing one progress line per row to progress (nil
// for none). For each release it draws a seed from the simulation RNG,
// evaluates PrefixNoise at the prefixes (all of them, or a sample) and
// records the mean squared and the max absolute noise.
func Accuracy(cfg AccuracyConfig, progress io.Writer) ([]AccuracyRow, error) {
	if cfg.Runs < 2 {
		return nil, fmt.Errorf("bench: runs %d: need at least 2 releases for a standard error", cfg.Runs)
	}
	if len(cfg.Mechanisms) == 0 || cfg.Mechanisms[0] != "tree" {
		return nil, fmt.Errorf("bench: mechanisms %v: the first must be tree, the reference of the ratios", cfg.Mechanisms)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x61636375))
	alphaRNG := rand.New(rand.NewPCG(cfg.Seed, 0x616c7068))
	var rows []AccuracyRow
	for _, n := range cfg.Bins {
		var hist []int64
		if len(cfg.Alphas) > 0 {
			var err error
			if hist, err = synthetic.PoissonHistogram(1, n, cfg.Seed); err != nil {
				return nil, err
			}
		}
		for _, eps := range cfg.Epsilons {
			var ref AccuracyRow
			for _, name := range cfg.Mechanisms {
				row, err := accuracyRow(cfg, mechanism.Params{Name: name, Bins: n, Epsilon: eps, Delta: cfg.Delta, Relation: cfg.Relation}, rng)
				if err != nil {
					return nil, err
				}
				if name == "tree" {
					ref = row
				}
				if hist != nil {
					m, err := mechanism.New(row.Params)
					if err != nil {
						return nil, err
					}
					if row.Alpha, row.Tau, err = alphaErrors(m, hist, cfg.Alphas, cfg.Runs, cfg.MaxPrefixes, alphaRNG); err != nil {
						return nil, err
					}
					row.AlphaData = "X_pois(1)"
				}
				row.VarianceRatio = row.MeanVariance / ref.MeanVariance
				row.MSERatio = row.MSE / ref.MSE
				row.MaxErrorRatio = row.MaxError / ref.MaxError
				rows = append(rows, row)
				if progress != nil {
					fmt.Fprintf(progress, "N=%d ε=%g %-14s exact %.4g  MC %.4g ± %.2g (z=%+.1f)  max err %.4g\n",
						n, eps, row.Mechanism, row.MeanVariance, row.MSE, row.MSEStdErr, row.ZScore, row.MaxError)
				}
			}
		}
	}
	return rows, nil
}

// accuracyRow measures one mechanism.
func accuracyRow(cfg AccuracyConfig, p mechanism.Params, rng *rand.Rand) (AccuracyRow, error) {
	if p.Name == "tree" || p.Name == "kary" {
		p.Delta = 0 // the pure mechanisms are measured as pure ε-DP
	}
	m, err := mechanism.New(p)
	if err != nil {
		return AccuracyRow{}, err
	}
	row := AccuracyRow{Params: p, Bins: p.Bins, Epsilon: p.Epsilon, Delta: m.Delta(), Mechanism: m.Name(),
		MeanVariance: m.MeanVariance(), Runs: cfg.Runs, Prefixes: p.Bins}
	for i := 1; i <= p.Bins; i++ {
		row.MaxVariance = max(row.MaxVariance, m.PrefixVariance(i))
	}
	sampled := cfg.MaxPrefixes > 0 && p.Bins > cfg.MaxPrefixes
	if sampled {
		row.Prefixes = cfg.MaxPrefixes
	}
	var sum, sumSq, sumMax float64
	for range cfg.Runs {
		var seed [32]byte
		for j := 0; j < 32; j += 8 {
			binary.LittleEndian.PutUint64(seed[j:], rng.Uint64())
		}
		rel := m.NewRelease(seed)
		var sq, worst float64
		for j := 1; j <= row.Prefixes; j++ {
			i := j
			if sampled {
				i = 1 + rng.IntN(p.Bins)
			}
			x := float64(rel.PrefixNoise(i))
			sq += x * x
			worst = max(worst, math.Abs(x))
		}
		mse := sq / float64(row.Prefixes)
		sum, sumSq, sumMax = sum+mse, sumSq+mse*mse, sumMax+worst
	}
	r := float64(cfg.Runs)
	row.MSE = sum / r
	row.MSEStdErr = math.Sqrt(max(sumSq/r-row.MSE*row.MSE, 0) / (r - 1))
	row.ZScore = (row.MSE - row.MeanVariance) / row.MSEStdErr
	row.MaxError = sumMax / r
	return row, nil
}
