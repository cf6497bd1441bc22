package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/bench"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// newBenchAccuracyCommand builds the "bench accuracy" command.
func newBenchAccuracyCommand() *cobra.Command {
	var format, neighbours string
	var runs, maxPrefixes int
	var alphaList string
	cmd := &cobra.Command{
		Use:   "accuracy",
		Short: "Exact and Monte-Carlo prefix error of every noise mechanism, as ratios to tree",
		Long: `accuracy measures, for N ∈ {2^10, 2^15, 2^20} and ε ∈ {0.1, 0.5, 1, 2}
(δ = 1e−9 for cascade and gaussian-tree), the exact mean and max prefix
variance of each mechanism and, over --runs releases, the Monte-Carlo MSE
(with its standard error and z-score against the exact mean) and the mean
max error, each also as a ratio to tree at the same (N, ε). Releases with
more than --max-prefixes bins are evaluated at that many prefixes drawn
uniformly (the MSE stays unbiased; the max is over the sample).

For each α of --alpha it also reports the α-mRMSE of counting-on-trees
(Definition 1.4: √E[max(|y′ − y| − α·y, 0)²], the largest over the
nodes of the mechanism's own tree, binary or k-ary, of their range
counts, and over the prefix sums) on X_pois(1) over the N bins, exact at
α = 0 (marked *) and Monte-Carlo over --runs further releases otherwise
(each node's draws pooled with those of the nodes of equal noise law),
with the largest smoothed relative error E|y′ − y|/max(y, τ) of a node,
τ = 0.1 % of n, and its Appendix B bound α + α-mRMSE/τ. --alpha ""
leaves them out.
Progress goes to stderr.`,
		Example: `  fedecdf bench accuracy
  fedecdf bench accuracy --runs 3 --neighbours addremove --format json
  fedecdf bench accuracy --runs 3 --alpha 0,0.1,0.5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rel, err := mechanism.ParseRelation(neighbours)
			if err != nil {
				return fmt.Errorf("--neighbours: %w", err)
			}
			if format != "text" && format != "json" {
				return fmt.Errorf("format %q: want text or json", format)
			}
			alphas, err := parseAlphas(alphaList)
			if err != nil {
				return err
			}
			rows, err := bench.Accuracy(bench.AccuracyConfig{
				Bins:        []int{1 << 10, 1 << 15, 1 << 20},
				Epsilons:    []float64{0.1, 0.5, 1, 2},
				Delta:       1e-9,
				Relation:    rel,
				Mechanisms:  []string{"tree", "kary", "cascade", "gaussian-tree"},
				Runs:        runs,
				MaxPrefixes: maxPrefixes,
				Seed:        1,
				Alphas:      alphas,
			}, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := addSmoothedMSE(rows, smoothBins, runs, cmd.ErrOrStderr()); err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"neighbours": rel.String(), "rows": rows})
			}
			return writeAccuracyText(cmd.OutOrStdout(), rows, rel)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().IntVar(&runs, "runs", 10, "releases per mechanism and (N, ε)")
	cmd.Flags().IntVar(&maxPrefixes, "max-prefixes", 1<<15, "prefixes evaluated per release beyond which they are sampled")
	cmd.Flags().StringVar(&neighbours, "neighbours", "replace", "neighbouring relation: replace or addremove")
	cmd.Flags().StringVar(&alphaList, "alpha", "0,0.1,0.5", `multiplicative slacks α of the α-mRMSE columns (comma-separated, each in [0, 1); "" for none)`)
	return cmd
}

// parseAlphas parses --alpha: comma-separated α in [0, 1), none for "".
func parseAlphas(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		a, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(a >= 0 && a < 1) {
			return nil, fmt.Errorf("--alpha %s: each α must be a number in [0, 1)", strings.TrimSpace(f))
		}
		out = append(out, a)
	}
	return out, nil
}

// writeAccuracyText prints the rows as two tables to out: the prefix
// errors, then the MSE after smoothing.
func writeAccuracyText(out io.Writer, rows []bench.AccuracyRow, rel mechanism.Relation) error {
	w := tabwriter.NewWriter(out, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "N\teps\tmechanism\tdelta\tmean var\tmax var\tvar/tree\tMC MSE\ts.e.\tz\tMSE/tree\tmax err\tmax/tree\tprefixes\truns\t\n")
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%g\t%s\t%g\t%.1f\t%.1f\t%.3f\t%.1f\t%.1f\t%+.1f\t%.3f\t%.1f\t%.3f\t%d\t%d\t\n",
			r.Bins, r.Epsilon, r.Mechanism, r.Delta, r.MeanVariance, r.MaxVariance, r.VarianceRatio,
			r.MSE, r.MSEStdErr, r.ZScore, r.MSERatio, r.MaxError, r.MaxErrorRatio, r.Prefixes, r.Runs)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nneighbours: %s. MSE in counts² per prefix; Monte-Carlo over the releases of each row.\n", rel)
	if err := writeAlphaText(out, rows); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nAfter p = 2 smoothing (PAVA + clip) on X_pois(λ), N = %d:\n", smoothBins)
	w = tabwriter.NewWriter(out, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "eps\tmechanism\tλ=1 MSE\t/tree\tλ=3 MSE\t/tree\t\n")
	var ref map[string]float64
	for _, r := range rows {
		if r.SmoothedMSE == nil {
			continue
		}
		if strings.HasPrefix(r.Mechanism, "tree") {
			ref = r.SmoothedMSE
		}
		fmt.Fprintf(w, "%g\t%s\t%.1f\t%.3f\t%.1f\t%.3f\t\n", r.Epsilon, r.Mechanism,
			r.SmoothedMSE["lambda=1"], r.SmoothedMSE["lambda=1"]/ref["lambda=1"],
			r.SmoothedMSE["lambda=3"], r.SmoothedMSE["lambda=3"]/ref["lambda=3"])
	}
	return w.Flush()
}

// smoothBins is the N of the paper's X_pois data set (dp-ecdf §6.2.1).
const smoothBins = synthetic.PoissonBins

// addSmoothedMSE measures, for the rows at N = bins, the MSE after p = 2
// smoothing of releases on X_pois(λ = 1 and 3), with reproducible seeds.
func addSmoothedMSE(rows []bench.AccuracyRow, bins, runs int, progress io.Writer) error {
	rng := rand.New(rand.NewPCG(2, 0x736d6f6f))
	seeds := func() (noise.Seed, error) {
		var s noise.Seed
		for j := 0; j < len(s); j += 8 {
			binary.LittleEndian.PutUint64(s[j:], rng.Uint64())
		}
		return s, nil
	}
	for i := range rows {
		r := &rows[i]
		if r.Bins != bins {
			continue
		}
		m, err := mechanism.New(r.Params)
		if err != nil {
			return err
		}
		r.SmoothedMSE = make(map[string]float64)
		for _, lambda := range []float64{1, 3} {
			hist, err := synthetic.PoissonHistogram(lambda, bins, uint64(lambda))
			if err != nil {
				return err
			}
			v, err := bench.SmoothedMSE(hist, m, "l2", runs, seeds)
			if err != nil {
				return err
			}
			r.SmoothedMSE[fmt.Sprintf("lambda=%g", lambda)] = v
		}
		fmt.Fprintf(progress, "N=%d ε=%.6g %-14s smoothed MSE λ=1 %.4g, λ=3 %.4g\n", bins, r.Epsilon, r.Mechanism,
			r.SmoothedMSE["lambda=1"], r.SmoothedMSE["lambda=3"])
	}
	return nil
}

// writeAlphaText prints the α-mRMSE table of rows, when measured.
func writeAlphaText(out io.Writer, rows []bench.AccuracyRow) error {
	if len(rows) == 0 || len(rows[0].Alpha) == 0 {
		return nil
	}
	fmt.Fprintf(out, "\nα-mRMSE (counting-on-trees Def. 1.4) on %s, largest over the nodes of each mechanism's tree and over the prefixes;\n", rows[0].AlphaData)
	fmt.Fprintf(out, "* exact, else Monte-Carlo; SRE = largest node smoothed relative error (τ = 0.1%% of n) ≤ bound α + node/τ (App. B):\n")
	w := tabwriter.NewWriter(out, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "N\teps\tmechanism\t")
	for _, a := range rows[0].Alpha {
		fmt.Fprintf(w, "α=%g node\tprefix\tSRE\tbound\t", a.Alpha)
	}
	fmt.Fprintln(w)
	star := func(exact bool) string {
		if exact {
			return "*"
		}
		return ""
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%g\t%s\t", r.Bins, r.Epsilon, r.Mechanism)
		for _, a := range r.Alpha {
			fmt.Fprintf(w, "%.2f%s\t%.2f%s\t%.3g\t%.3g\t", a.Node, star(a.NodeExact), a.Prefix, star(a.PrefixExact), a.NodeSRE, a.NodeSREBound)
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}
