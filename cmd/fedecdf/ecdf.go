package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/dataset"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/party"
)

// ecdfOptions are the flags of "fedecdf ecdf".
type ecdfOptions struct {
	input, column, sep string
	missing            string
	epsilon, delta     float64
	bins, k            int
	min, max           float64
	scale, mechanism   string
	neighbours         string
	smooth             string
	quantiles          string
	format, plot       string
	clamp, progress    bool
	intervalDraws      int
}

// addColumnFlags defines the flags that read one numeric column (ecdf,
// histogram): --input, --column, --missing and --sep.
func addColumnFlags(f *pflag.FlagSet, o *ecdfOptions) {
	f.StringVar(&o.input, "input", "-", "CSV file to read, with a header line (- for stdin)")
	f.StringVar(&o.column, "column", "", "name of the CSV column to read (without it, the input is one number per line, no header)")
	f.StringVar(&o.missing, "missing", "error", `missing values ("", "?", "NA", "NaN", "null"): error, or skip to leave them out`)
	f.StringVar(&o.sep, "sep", "", "field separator: ',', ';' or 'tab' (default: detected from the header)")
}

// addGridFlags defines the public grid's --min, --max and --scale (ecdf,
// histogram; --bins has a default of each command's own).
func addGridFlags(f *pflag.FlagSet, o *ecdfOptions) {
	f.Float64Var(&o.min, "min", 0, "lower end of the public grid (required)")
	f.Float64Var(&o.max, "max", 0, "upper end of the public grid (required)")
	f.StringVar(&o.scale, "scale", "linear", "grid spacing: linear or log")
}

// newECDFCommand builds the "ecdf" command with its own options, so tests
// can run it in-process.
func newECDFCommand() *cobra.Command {
	var o ecdfOptions
	cmd := &cobra.Command{
		Use:   "ecdf",
		Short: "Release a differentially private ECDF and quantiles of one CSV column",
		Long: `ecdf reads one numeric column, bins it on a public grid of --bins thresholds
over [--min, --max], and releases the empirical CDF at every threshold with
ε-differential privacy (one release; re-reading its values costs nothing).
It prints the raw private ECDF F̂ (normalised by n, not clipped), a smoothed,
monotone curve, and quantiles read from the smoothed curve by binary search.

--min and --max must be chosen without looking at the data: deriving them
from the data would leak it outside the privacy guarantee.

A missing value ("", "?", "NA", "NaN" or "null") is an error by default, as
in simulate's --score-column; --missing skip leaves such values out (n is
then the number of values present). Without --input and with stdin a
terminal, ecdf says it is reading numbers from stdin (end them with Ctrl-D).

Time: the release grows linearly in --bins (at most 1048576) and the 95 %
intervals take --interval-draws Monte-Carlo draws at every threshold; when
they will take long, ecdf says so on standard error before starting them.
A spinner shows each phase on a terminal; --progress prints one line per
finished phase with its time when standard error is redirected.`,
		Example: `  # Ages in a ';'-separated file with a quoted header; 128 bins over [18, 95]
  printf '"age";"job"\n30;"admin"\n45;"nurse"\n61;"retired"\n38;"admin"\n' > ages.csv
  fedecdf ecdf --input ages.csv --column age --min 18 --max 95 --bins 128 --quantiles 0.25,0.5,0.75

  # One number per line on stdin, log-spaced grid, JSON output
  seq 1 1000 | fedecdf ecdf --min 1 --max 1000 --scale log --format json

  # Clamp values outside [0, 0.5] instead of failing, and plot the curves
  # (scores.csv: 2000 scores in [0, 1] with 0/1 labels, made by awk)
  awk 'BEGIN { srand(1); print "score,label"; for (i = 0; i < 2000; i++) { s = rand(); print s "," (rand() < s) } }' > scores.csv
  fedecdf ecdf --input scores.csv --column score --min 0 --max 0.5 --clamp --plot ecdf.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("min") || !cmd.Flags().Changed("max") {
				return errors.New("--min and --max are required: the grid must be fixed in advance, because taking the domain from the data (its minimum and maximum) would leak private values outside the differential privacy guarantee")
			}
			if cmd.Flags().Changed("k") && o.mechanism != "kary" && o.mechanism != "auto" {
				return fmt.Errorf("--k %d is the arity of the kary mechanism, but --mechanism is %s: drop --k or use --mechanism kary", o.k, o.mechanism)
			}
			return runECDF(cmd, &o)
		},
	}
	f := cmd.Flags()
	addColumnFlags(f, &o)
	f.Float64Var(&o.epsilon, "epsilon", 1, "privacy budget ε of the release")
	f.Float64Var(&o.delta, "delta", 0, "δ of approximate (ε, δ)-DP mechanisms (cascade, gaussian-tree; auto considers them when δ > 0)")
	f.IntVar(&o.bins, "bins", 1024, binsUsageUnlike("is a finer grid: ecdf releases one column locally, with no DCF report or server work growing with N"))
	addGridFlags(f, &o)
	f.StringVar(&o.mechanism, "mechanism", "auto", "noise mechanism: "+strings.Join(mechanism.Names, ", "))
	f.IntVar(&o.k, "k", 0, "arity of the kary mechanism (0: the best for N)")
	f.StringVar(&o.neighbours, "neighbours", "replace", "neighbouring relation: replace (n public) or addremove")
	f.StringVar(&o.smooth, "smooth", "l2", "post-processing of F̂ into a monotone curve in [0, 1] (dp-ecdf Eq. 3): "+strings.Join(smooth.Methods, ", "))
	f.StringVar(&o.quantiles, "quantiles", "0.25,0.5,0.75", "comma-separated probabilities whose quantiles to print")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.StringVar(&o.plot, "plot", "", "write a PNG plot of the private and smoothed curves to this file")
	f.BoolVar(&o.clamp, "clamp", false, "clamp values outside [--min, --max] to the end bins instead of failing")
	addIntervalDrawsFlag(cmd, &o.intervalDraws)
	addProgressFlag(cmd, &o.progress)
	return cmd
}

// runECDF releases the ECDF of the input as o says and prints it: the
// input's values become parties of a trusted curator
// (aggregation/curator), whose one release of the Count component
// package analysis reads, smooths and cuts into quantiles.
func runECDF(cmd *cobra.Command, o *ecdfOptions) error {
	probs, err := parseProbabilities(o.quantiles)
	if err != nil {
		return err
	}
	grid, params, err := o.setup()
	if err != nil {
		return err
	}
	bar := newProgress(cmd.ErrOrStderr(), o.progress)
	bar.Start("reading "+inputName(o), -1)
	bins, err := o.binValues(cmd, grid)
	if err != nil {
		return err
	}
	bar.Finish()
	e, err := releaseECDF(cmd.Context(), grid, params, bins, o.intervalDraws, bar, cmd.ErrOrStderr())
	if err != nil {
		return fmt.Errorf("%s: %w", inputName(o), err)
	}
	if err := e.Smooth(o.smooth, probs); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotCurves(o.plot, e); err != nil {
			return err
		}
	}
	if o.format == "json" {
		return writeJSON(cmd.OutOrStdout(), e)
	}
	return writeECDFSummary(cmd.OutOrStdout(), e)
}

// releaseECDF gives each value, by its 1-based bin on g, to a party of a
// trusted curator, makes one release of the Count component under p
// (one full-scale noise draw, charged to a budget of exactly its cost)
// and reads every prefix of it, with draws interval draws, showing each
// phase on bar (if not nil) and telling w beforehand when the draws will
// take long (noteSlowDraws).
func releaseECDF(ctx context.Context, g *ecdf.Grid, p mechanism.Params, bins []int, draws int, bar *progress, w io.Writer) (*analysis.ECDF, error) {
	bar.Start(fmt.Sprintf("releasing the ECDF of %d values over %d bins", len(bins), g.Len()), -1)
	parties := make([]*party.Party, len(bins))
	for k, b := range bins {
		var err error
		// τ_b is in bin b: the party bins it back to b.
		if parties[k], err = party.New(party.Instance{Score: g.Threshold(b)}, g); err != nil {
			return nil, err
		}
	}
	u, err := curator.New("ecdf", g.Len(), parties, ledger.Budget{Epsilon: p.Epsilon, Delta: p.Delta}, ledger.NewMemory())
	if err != nil {
		return nil, err
	}
	rel, err := u.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: p, Components: []core.Component{core.Count}})
	if err != nil {
		return nil, err
	}
	res, err := u.Sum(ctx, aggregation.Query{Release: rel, Component: core.Count, Prefixes: analysis.AllPrefixes(g.Len())})
	if err != nil {
		return nil, err
	}
	bar.Finish()
	if draws > 0 {
		noteSlowDraws(w, draws, len(res.Prefixes), g.Len())
		bar.Start(fmt.Sprintf("%d interval draws", draws), -1)
		defer bar.Finish()
	}
	return analysis.NewECDF(res, g, draws)
}

// setup checks the flags and builds the grid and the mechanism
// parameters of the release (refusing bad ones before reading the input).
func (o *ecdfOptions) setup() (*ecdf.Grid, mechanism.Params, error) {
	var p mechanism.Params
	scale, err := ecdf.ParseScale(o.scale)
	if err != nil {
		return nil, p, err
	}
	relation, err := mechanism.ParseRelation(o.neighbours)
	if err != nil {
		return nil, p, fmt.Errorf("--neighbours: %w", err)
	}
	if o.format != "text" && o.format != "json" {
		return nil, p, fmt.Errorf("unknown --format %q (want text or json)", o.format)
	}
	if _, err := analysis.CheckSmoothing(o.smooth, 0, o.bins); err != nil {
		return nil, p, fmt.Errorf("--smooth: %w", err)
	}
	if err := checkBins(o.bins); err != nil {
		return nil, p, err
	}
	grid, err := ecdf.NewGrid(scale, o.min, o.max, o.bins)
	if err != nil {
		return nil, p, err
	}
	p = mechanism.Params{Name: o.mechanism, Bins: grid.Len(), Epsilon: o.epsilon, Delta: o.delta, K: o.k, Relation: relation}
	if _, err := newMechanism(p); err != nil {
		return nil, p, err
	}
	return grid, p, nil
}

// binValues reads the input and bins it on grid, clamping (and saying
// so on the command's standard error) when --clamp is given.
func (o *ecdfOptions) binValues(cmd *cobra.Command, grid *ecdf.Grid) ([]int, error) {
	if (o.input == "" || o.input == "-") && stdinIsTerminal(cmd.InOrStdin()) {
		fmt.Fprintln(cmd.ErrOrStderr(), "fedecdf: reading numbers from stdin, one per line (Ctrl-D to end)")
	}
	xs, skipped, err := readValues(cmd.InOrStdin(), o)
	if errors.Is(err, dataset.ErrMissing) {
		return nil, fmt.Errorf("%w; give --missing skip to leave missing values out", err)
	}
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "fedecdf: skipped %d missing value(s); %d values are released (these counts are not differentially private: do not publish them)\n", skipped, len(xs))
	}
	bins, clamped, err := grid.BinAll(xs, o.clamp)
	if err != nil {
		err = fmt.Errorf("%s: %w", inputName(o), err)
		if errors.Is(err, ecdf.ErrOutOfRange) {
			err = fmt.Errorf("%w (give --clamp to clamp such values to the grid)", err)
		}
		return nil, err
	}
	if clamped > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "fedecdf: clamped %d of %d values to [%g, %g] (this count is not differentially private: do not publish it)\n", clamped, len(xs), o.min, o.max)
	}
	return bins, nil
}

// newMechanism builds the mechanism of p (mechanism.New). When it fails
// at δ = 0 only for want of a positive δ — cascade and gaussian-tree are
// (ε, δ)-DP — the error says to give --delta.
func newMechanism(p mechanism.Params) (mechanism.Mechanism, error) {
	m, err := mechanism.New(p)
	if err != nil && p.Delta == 0 {
		p.Delta = 1e-6
		if _, other := mechanism.New(p); other == nil {
			err = fmt.Errorf("%w: --mechanism %s is (ε, δ)-DP: give --delta > 0, e.g. --delta 1e-6", err, p.Name)
		}
	}
	return m, err
}

// inputName names the input in errors: the file (or stdin) and column.
func inputName(o *ecdfOptions) string {
	name := o.input
	if name == "" || name == "-" {
		name = "stdin"
	}
	if o.column != "" {
		name += fmt.Sprintf(", column %q", o.column)
	}
	return name
}

// readValues reads the column from the input file or from stdin; without
// --column the input is one number per line.
func readValues(stdin io.Reader, o *ecdfOptions) (values []float64, skipped int, err error) {
	var sep rune
	switch o.sep {
	case "":
	case "tab", `\t`, "\t":
		sep = '\t'
	case ",", ";":
		sep = rune(o.sep[0])
	default:
		return nil, 0, fmt.Errorf("unknown --sep %q (want ',', ';' or tab)", o.sep)
	}
	var skip bool
	switch o.missing {
	case "error":
	case "skip":
		skip = true
	default:
		return nil, 0, fmt.Errorf("--missing %q: want error or skip", o.missing)
	}
	if o.input == "" || o.input == "-" {
		return dataset.ReadColumnMissing(stdin, "stdin", o.column, sep, skip)
	}
	f, err := os.Open(o.input)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return dataset.ReadColumnMissing(f, o.input, o.column, sep, skip)
}

// stdinIsTerminal says whether r, a command's standard input, is a
// terminal (a variable, so tests can pretend).
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
}

// parseProbabilities parses a comma-separated list of probabilities in [0, 1].
func parseProbabilities(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ps []float64
	for _, field := range strings.Split(s, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
		if err != nil || p < 0 || p > 1 {
			return nil, fmt.Errorf("--quantiles: %q is not a probability in [0, 1]", field)
		}
		ps = append(ps, p)
	}
	return ps, nil
}
