package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/simulate"
)

// simulateOptions are the flags of "fedecdf simulate".
type simulateOptions struct {
	cfg                     simulate.Config
	format, out, neighbours string
	missing                 string
	order                   string
	intervalDraws           int
}

// newSimulateCommand builds the "simulate" command with its own options,
// so tests can run it in-process.
func newSimulateCommand() *cobra.Command {
	var o simulateOptions
	cmd := &cobra.Command{
		Use:     "simulate",
		Short:   "Run parties, two servers and an analyst in one process and compare the private statistics with the true ones",
		Long:    simulateLong,
		Example: simulateExample,
		Args:    cobra.NoArgs,
		RunE:    o.run,
	}
	o.addFlags(cmd)
	addIntervalDrawsFlag(cmd, &o.intervalDraws)
	addOrderFlag(cmd, &o.order)
	addDeprecatedFlags(cmd)
	return cmd
}

const simulateLong = `simulate runs n parties, the leader and helper servers and an analyst in one
process over a counting in-process transport, and compares the private
outputs with the exact ones.

Data: without --input, a built-in synthetic table is scored by a logistic
regression (its test rows become the parties). With --input and
--score-column, the score column and --label-column are read as they are;
a row missing either is an error, or with --missing skip left out whole
and counted in the output's data line.
With --input and no --score-column, the file is a table with a label
column: a logistic regression is trained on
a seeded split (--drop names identifier columns) and the test rows' predicted
probabilities become the parties' scores, as in dp-ecdf §6.

Privacy: one total --epsilon buys the ECDF of the scores (--ecdf-share of
it) and one release of the positives' and negatives' prefix counts (the
rest), from which come the ROC and PR curves, the AUC and — when the scores
are probabilities on a grid within [0, 1] — the Hosmer–Lemeshow test
(Q = 10, hosmer.GridPlan) at no extra ε (--hosmer-plans roc).
--hosmer-plans grid,joint,paper with --hosmer-share S adds allocations with
releases of their own, for comparison (replace-one only). --epsilon is the
run's total, but --delta is the δ of every release per privacy unit, so a
run spends it once per release: --mechanism cascade --delta 1e-6 spends
δ = 2·10⁻⁶ in all (the ECDF and the ROC/PR release), as the privacy line
and the JSON's budget.delta say. cascade and gaussian-tree need δ > 0.
The ROC/PR release uses --roc-mechanism (default: --mechanism); auto there
becomes partitioned (the grid cut into three parts, each with its own
mechanism at the full ε) where that answers the grid's end bins with less
noise, as on the --bins 0 grid of 10⁴–10⁵ parties: the least ROC area error
measured (EXPERIMENTS.md).

Verification: with --backend additive and dcf (the default) both servers
check every report before it counts, on their shares alone, and reject
invalid ones (--malicious K adds K parties sending them; the output counts
them per reason). Validity is not truth: a party may still report a false
score or label. Verified dcf reports carry the probability when an
allocation releases it (joint, paper), checked in [0, 1] at the record's
bin; the additive backend's cannot, so there those allocations are
refused. --unverified has the dcf servers fold the parties' DCF keys
unchecked (for comparing the cost of verification).

Neighbours: under --neighbours replace (the default) n is public and the
analyst normalises the ECDF by it; under addremove the servers do not tell
the analyst n, which normalises by the released noisy total instead. The
output says which.`

const simulateExample = `  fedecdf simulate
  fedecdf simulate --neighbours addremove
  fedecdf simulate --mechanism cascade --delta 1e-6
  fedecdf simulate --parties 2000 --backend plain --format json

  # Verified one-shot uploads, with 10 malicious parties whose invalid
  # reports both servers reject (the output counts them per reason)
  fedecdf simulate --parties 2000 --malicious 10
  fedecdf simulate --parties 2000 --backend additive --malicious 10

  # The cost of verification: the same run with unchecked DCF keys
  fedecdf simulate --parties 2000 --unverified

  # A file of scores and 0/1 labels (here 2000 rows made by awk)
  awk 'BEGIN { srand(1); print "score,label"; for (i = 0; i < 2000; i++) { s = rand(); print s "," (rand() < s) } }' > scores.csv
  fedecdf simulate --input scores.csv --score-column score --label-column label --out plots/

  # A table with a yes/no label column (here made by awk): a logistic
  # regression is trained on it first (--drop lists identifier columns;
  # '!v' means "not v")
  awk 'BEGIN { srand(2); print "id,age,balance,y"; for (i = 0; i < 3000; i++) { a = 20 + 60 * rand(); print i "," a "," 5000 * rand() "," (rand() < a / 100 ? "yes" : "no") } }' > table.csv
  fedecdf simulate --input table.csv --label-column y --positive yes --drop id
  fedecdf simulate --input table.csv --label-column y --positive '!no' --drop id --format json`

// simulateBackends are the values of simulate --backend.
var simulateBackends = []string{"plain", "additive", "dcf"}

// addFlags binds the flags of cmd to o, with simulate.DefaultConfig's
// values as defaults.
func (o *simulateOptions) addFlags(cmd *cobra.Command) {
	d := simulate.DefaultConfig()
	f := cmd.Flags()
	f.IntVar(&o.cfg.Parties, "parties", 0, fmt.Sprintf("number of parties n (default: %d of the built-in data; with --input, default: every row, or give n for the first n rows)", d.Parties))
	f.StringVar(&o.cfg.Backend, "backend", d.Backend, "secure-sum backend: "+strings.Join(simulateBackends, ", ")+" (plain: a trusted curator, no secure sum)")
	f.IntVar(&o.cfg.Malicious, "malicious", 0, "number of malicious parties added, each uploading an invalid report that both servers reject (--backend additive or dcf); n and every statistic cover the honest parties")
	f.BoolVar(&o.cfg.Unverified, "unverified", false, "--backend dcf only: fold the parties' DCF keys unchecked, probability included (one party can then move any statistic)")
	f.StringVar(&o.cfg.Data, "input", "", "CSV file (default: built-in synthetic table scored by logistic regression)")
	f.StringVar(&o.cfg.ScoreCol, "score-column", "", "score column of --input (default: train a logistic regression on the table)")
	f.StringVar(&o.cfg.LabelCol, "label-column", d.LabelCol, "label column of --input")
	f.StringVar(&o.missing, "missing", "error", `with --score-column: rows missing the score or the label ("", "?", "NA", "NaN", "null"): error, or skip to leave each such row out whole (the output counts them)`)
	f.StringVar(&o.cfg.Positive, "positive", "", `positive label value of --input ("" means 0/1 labels, "!v" means not v)`)
	f.StringSliceVar(&o.cfg.Drop, "drop", nil, "columns of --input that are not features (identifiers), comma-separated")
	f.Float64Var(&o.cfg.TestFraction, "test-fraction", 0, "share of the table's rows held out and scored (default 0.3)")
	f.Float64Var(&o.cfg.Epsilon, "epsilon", d.Epsilon, "total privacy budget ε of the run, split among its releases by --ecdf-share and --hosmer-share (unlike --delta, a total)")
	f.Float64Var(&o.cfg.ECDFShare, "ecdf-share", d.ECDFShare, "share of ε spent on the ECDF of the scores (0: none, a ROC-only run)")
	f.StringSliceVar(&o.cfg.HosmerPlans, "hosmer-plans", d.HosmerPlans, "Hosmer–Lemeshow allocations: roc (from the ROC/PR release, no ε of its own), and with --hosmer-share: grid (its own {y, 1−y} release), joint (one release of y, 1−y, p), paper (dp-ecdf Algorithm 2's ε/(L+9))")
	f.IntVar(&o.cfg.Bootstrap, "bootstrap", d.Bootstrap, "Hosmer–Lemeshow: number B of null data sets simulated over the public noise law for the noise-aware p-value (Monte-Carlo s.e. √(p(1−p)/B); negative: none)")
	f.Float64Var(&o.cfg.HosmerShare, "hosmer-share", 0, "share of ε spent on the Hosmer–Lemeshow allocations grid, joint and paper (split evenly); the rest goes to the ROC/PR release")
	f.StringVar(&o.cfg.Mechanism, "mechanism", d.Mechanism, "noise mechanism: "+strings.Join(mechanism.Names, ", "))
	f.StringVar(&o.cfg.ROCMechanism, "roc-mechanism", "", "noise mechanism of the ROC/PR release (default: --mechanism; auto picks partitioned where it has less noise at the grid's ends): "+strings.Join(mechanism.Names, ", "))
	f.Float64Var(&o.cfg.Delta, "delta", 0, "δ of each release per privacy unit, not a total: the run spends it once per release (cascade: the ECDF's and the ROC/PR release, 2·δ in all, which the privacy line and budget.delta print); cascade and gaussian-tree need δ > 0 (auto considers them only then)")
	f.StringVar(&o.neighbours, "neighbours", "replace", "neighbouring relation: replace (n public) or addremove (the analyst normalises by a noisy total)")
	f.IntVar(&o.cfg.Bins, "bins", d.Bins, binsUsage("suits thousands of parties; 0 chooses N for the ROC curve from n and its ε, n·ε/600 per class vector within [32, 1024] (analysis.ROCBins), a coarser grid that the ECDF and the Hosmer–Lemeshow groups share"))
	f.Float64Var(&o.cfg.Min, "min", d.Min, "grid minimum")
	f.Float64Var(&o.cfg.Max, "max", d.Max, "grid maximum")
	f.IntVar(&o.cfg.Prefixes, "prefixes", 0, "number |B| of evenly spaced thresholds queried (default all N)")
	f.Uint64Var(&o.cfg.Seed, "seed", d.Seed, "seed of the built-in data and of the train/test split")
	f.StringVar(&o.cfg.Smoothing, "smooth", d.Smoothing, "smoothing of the private curves: "+strings.Join(smooth.Methods, ", ")+" (tree-l2 needs every prefix)")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.StringVar(&o.out, "out", "", "directory for PNG plots (none by default)")
}

// check refuses, before any data is read, flag values simulate would
// fail on late or silently replace.
func (o *simulateOptions) check(cmd *cobra.Command) error {
	cfg, changed := &o.cfg, cmd.Flags().Changed
	switch {
	case checkBins(cfg.Bins) != nil:
		return checkBins(cfg.Bins)
	case !slices.Contains(simulateBackends, cfg.Backend):
		return fmt.Errorf("--backend %q: want one of %s", cfg.Backend, strings.Join(simulateBackends, ", "))
	case simulate.CheckVerification(*cfg) != nil:
		return fmt.Errorf("--malicious, --unverified: %w", simulate.CheckVerification(*cfg))
	case !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0):
		return fmt.Errorf("--epsilon %g: the total budget must be positive and finite", cfg.Epsilon)
	case !(cfg.Delta >= 0 && cfg.Delta < 1):
		return fmt.Errorf("--delta %g: want δ in [0, 1)", cfg.Delta)
	case !(cfg.ECDFShare >= 0 && cfg.ECDFShare < 1):
		return fmt.Errorf("--ecdf-share %g: want a share of ε in [0, 1) (0: no ECDF release, a ROC-only run), the rest going to the ROC/PR release", cfg.ECDFShare)
	case !(cfg.HosmerShare >= 0 && cfg.ECDFShare+cfg.HosmerShare < 1):
		return fmt.Errorf("--hosmer-share %g: want a share of ε in [0, 1) that leaves something for ROC/PR after --ecdf-share %g", cfg.HosmerShare, cfg.ECDFShare)
	case cfg.Bins < 0:
		return fmt.Errorf("--bins %d is negative (0: chosen from n and ε)", cfg.Bins)
	case cfg.Prefixes < 0 || cfg.Bins > 0 && cfg.Prefixes > cfg.Bins:
		return fmt.Errorf("--prefixes %d: want 1 to --bins %d thresholds, or 0 for every bin", cfg.Prefixes, cfg.Bins)
	case (cfg.Data == "" || changed("parties")) && cfg.Parties < 1:
		return fmt.Errorf("--parties %d is not positive", cfg.Parties)
	case changed("test-fraction") && !(cfg.TestFraction > 0 && cfg.TestFraction < 1):
		return fmt.Errorf("--test-fraction %g: want the share of rows held out for scoring in (0, 1) (default 0.3)", cfg.TestFraction)
	case o.missing != "error" && o.missing != "skip":
		return fmt.Errorf("--missing %q: want error or skip", o.missing)
	case o.missing == "skip" && cfg.ScoreCol == "":
		return errors.New("--missing skip needs --input and --score-column: a table's missing features are encoded for the logistic regression, not skipped")
	case changed("test-fraction") && cfg.ScoreCol != "":
		return errors.New("--test-fraction with --score-column: the scores are read as they are, nothing is trained or held out; drop --test-fraction")
	}
	return nil
}

// run checks the flags, runs the simulation and prints its report.
func (o *simulateOptions) run(cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("parties") {
		o.cfg.Parties = simulate.DefaultConfig().Parties
		if o.cfg.Data != "" {
			o.cfg.Parties = 0 // every (test) row of the file
		}
	}
	cfg := o.cfg
	cfg.IntervalDraws = o.intervalDraws
	if o.intervalDraws == 0 {
		cfg.IntervalDraws = -1 // simulate.Config: negative is none
	}
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("--format %q: want text or json", o.format)
	}
	if err := o.check(cmd); err != nil {
		return err
	}
	cfg.SkipMissing = o.missing == "skip"
	var err error
	if cfg.Neighbours, err = mechanism.ParseRelation(o.neighbours); err != nil {
		return fmt.Errorf("--neighbours: %w", err)
	}
	eps := cfg.Epsilon * cfg.ECDFShare // the ECDF's, or the ROC/PR release's in a ROC-only run
	if eps == 0 {
		eps = cfg.Epsilon * (1 - cfg.HosmerShare)
	}
	if _, err := newMechanism(mechanism.Params{Name: cfg.Mechanism, Bins: max(cfg.Bins, 1), Epsilon: eps, Delta: cfg.Delta, Relation: cfg.Neighbours}); err != nil {
		return err
	}
	if _, err := newMechanism(mechanism.Params{Name: cmp.Or(cfg.ROCMechanism, cfg.Mechanism), Bins: max(cfg.Bins, 1), Epsilon: cfg.Epsilon, Delta: cfg.Delta, Relation: cfg.Neighbours}); err != nil {
		return fmt.Errorf("--roc-mechanism: %w", err)
	}
	if p := newProgress(cmd.ErrOrStderr(), cfg.Data != "" || cfg.Parties >= 10000); p != nil {
		cfg.Progress = p
	}
	r, err := runSimulation(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	if o.out != "" {
		paths, err := r.WritePlots(o.out)
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Fprintln(cmd.ErrOrStderr(), "fedecdf: wrote", p)
		}
	}
	if o.format == "json" {
		out := *r // the JSON, in --order
		if r.ROC != nil && o.order == analysis.OrderSklearn {
			if out.ROC, err = r.ROC.InOrder(o.order); err != nil {
				return err
			}
			out.True.ROC = r.True.ROC.Sklearn()
		}
		return writeJSON(cmd.OutOrStdout(), &out)
	}
	return r.WriteText(cmd.OutOrStdout())
}
