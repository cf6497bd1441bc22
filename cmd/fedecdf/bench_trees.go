package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/bench"
	"github.com/fedecdf/fedecdf/internal/dataset"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// benchTreesOptions are the flags of "bench trees".
type benchTreesOptions struct {
	shapes, data, column, format, neighbours string
	epsilon, min, max                        float64
	deltas, alphas                           []float64
	runs                                     int
}

// newBenchTreesCommand builds the "bench trees" command.
func newBenchTreesCommand() *cobra.Command {
	var o benchTreesOptions
	cmd := &cobra.Command{
		Use:   "trees",
		Short: "α-mRMSE of every node count: counting-on-trees against the prefix mechanisms",
		Long: `trees measures, for each tree shape (arity b, depth d: b^(d−1) bins), δ and
α, the α-mRMSE (counting-on-trees Definition 1.4) of the node counts that
every mechanism releases: the largest over the nodes of the Monte-Carlo
α-mRMSE over --runs releases, the worst case its public parameters
predict, and its ratio to the best of the other mechanisms. The prefix
mechanisms (tree: Laplace; gaussian-tree: Gaussian; kary; cascade) give a
node as the difference of two released prefixes; counting-on-trees is
the (ε,δ) algorithm of Theorem 4.1.

--input poisson draws X_pois(1) over the bins (dp-ecdf §6); --input FILE
bins --column of a CSV on a linear grid over [--min, --max].
Progress goes to stderr.`,
		Example: `  fedecdf bench trees --shapes 2x4,2x8,2x12,2x16 --deltas 1e-6,1e-9 --alphas 0.1,0.5
  fedecdf bench trees --shapes 4x8 --input ../shared/data/bank-full.csv --column age --min 18 --max 96`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchTrees(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.shapes, "shapes", "2x4,2x8,2x12,2x16,4x4,4x8,16x4", "tree shapes arity x depth, comma-separated")
	f.Float64Var(&o.epsilon, "epsilon", 1, "ε of every release")
	f.Float64SliceVar(&o.deltas, "deltas", []float64{1e-6, 1e-9}, "δ values (pure mechanisms ignore them)")
	f.Float64SliceVar(&o.alphas, "alphas", []float64{0.1, 0.5}, "multiplicative slacks α, each in (0, 1)")
	f.StringVar(&o.neighbours, "neighbours", "addremove", "neighbouring relation: replace or addremove")
	f.IntVar(&o.runs, "runs", 10, "releases per mechanism and setting")
	f.StringVar(&o.data, "input", "poisson", "poisson (X_pois), or a CSV file")
	f.StringVar(&o.column, "column", "", "the CSV's numeric column (with --input FILE)")
	f.Float64Var(&o.min, "min", 0, "grid minimum (with --input FILE; public)")
	f.Float64Var(&o.max, "max", 0, "grid maximum (with --input FILE; public)")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	addDeprecatedFlags(cmd)
	return cmd
}

func runBenchTrees(cmd *cobra.Command, o benchTreesOptions) error {
	rel, err := mechanism.ParseRelation(o.neighbours)
	if err != nil {
		return fmt.Errorf("--neighbours: %w", err)
	}
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("format %q: want text or json", o.format)
	}
	shapes, err := parseShapes(o.shapes)
	if err != nil {
		return err
	}
	data := func(bins int) ([]int64, string, error) {
		h, err := synthetic.PoissonHistogram(1, bins, 1)
		return h, "X_pois(1)", err
	}
	if o.data != "poisson" {
		if o.column == "" || !(o.max > o.min) {
			return fmt.Errorf("--input %s: needs --column and a public range --min < --max", o.data)
		}
		values, err := dataset.ReadColumn(o.data, o.column, 0)
		if err != nil {
			return err
		}
		data = func(bins int) ([]int64, string, error) {
			g, err := ecdf.NewLinearGrid(o.min, o.max, bins)
			if err != nil {
				return nil, "", err
			}
			idx, _, err := g.BinAll(values, true)
			if err != nil {
				return nil, "", err
			}
			h, err := ecdf.Histogram(idx, bins)
			return h, o.column, err
		}
	}
	rows, err := bench.Trees(bench.TreesConfig{Shapes: shapes, Epsilon: o.epsilon, Deltas: o.deltas, Alphas: o.alphas,
		Relation: rel, Mechanisms: []string{"tree", "gaussian-tree", "kary", "cascade", "counting-on-trees"},
		Runs: o.runs, Data: data, Seed: 1}, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if o.format == "json" {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"neighbours": rel.String(), "rows": rows})
	}
	return writeTreesText(cmd.OutOrStdout(), rows, rel)
}

// parseShapes parses "2x4,4x8" into (arity, depth) pairs.
func parseShapes(s string) ([][2]int, error) {
	var out [][2]int
	for _, f := range strings.Split(s, ",") {
		a, d, ok := strings.Cut(strings.TrimSpace(f), "x")
		arity, err1 := strconv.Atoi(a)
		depth, err2 := strconv.Atoi(d)
		if !ok || err1 != nil || err2 != nil || arity < 2 || depth < 1 || depth > 41 {
			return nil, fmt.Errorf("--shapes %q: want arity x depth, e.g. 2x12 (arity ≥ 2, depth ≥ 1)", f)
		}
		out = append(out, [2]int{arity, depth})
	}
	return out, nil
}

// writeTreesText prints the rows as a table.
func writeTreesText(out io.Writer, rows []bench.TreesRow, rel mechanism.Relation) error {
	w := tabwriter.NewWriter(out, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "b\td\tbins\tdata\teps\tdelta\talpha\tmechanism\tα-mRMSE\tpredicted\t/best other\t\n")
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%d\t%d\t%s\t%g\t%g\t%g\t%s\t%.1f\t%.1f\t%.2f\t\n", r.Arity, r.Depth, r.Bins, r.Data,
			r.Epsilon, r.Delta, r.Alpha, r.Mechanism, r.MRMSE, r.Predicted, r.Ratio)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "\nneighbours: %s. α-mRMSE: largest over the nodes, Monte-Carlo over the releases; predicted: worst case over data sets.\n", rel)
	return err
}
