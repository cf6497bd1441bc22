package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// histogramOptions are the flags of "fedecdf histogram"; the input,
// grid and clamping ones are those of ecdf.
type histogramOptions struct {
	ecdfOptions
	arity int
	alpha float64
}

// newHistogramCommand builds the "histogram" command.
func newHistogramCommand() *cobra.Command {
	var o histogramOptions
	cmd := &cobra.Command{
		Use:   "histogram",
		Short: "Release a differentially private hierarchical histogram (every node count of a tree) of one CSV column",
		Long: `histogram reads one numeric column, bins it on a public grid of --bins
thresholds over [--min, --max], lays a tree of arity --arity over the bins
and releases the count of every node (the root, its children, …, each
bin) in one release, printed level by level with its guarantee.

Mechanisms: counting-on-trees, the (ε,δ) algorithm of Ghazi et al.,
"On Differentially Private Counting on Trees" (Theorem 4.1), built for a
multiplicative slack --alpha; or a prefix mechanism (tree, kary, cascade,
gaussian-tree) whose prefixes are differenced into node counts. auto
picks the least worst-case α-mRMSE (√E[max(|y′ − y| − α·y, 0)²], the
error left after forgiving α times the true count) predicted from the
public parameters; it is printed with the release.

A curator command: the counts are computed in this process, and its
output is the only release. A deployment's servers release prefix sums
only; a node count is then the difference of two released prefixes
(post-processing), while counting-on-trees is not offered there (its
sparse-vector decisions would have to be taken on the noisy sum of the
servers' shares: docs/json.md, "fedecdf histogram").`,
		Example: `  printf '"age";"job"\n30;"admin"\n45;"nurse"\n61;"retired"\n38;"admin"\n' > ages.csv
  fedecdf histogram --input ages.csv --column age --min 18 --max 95 --bins 16 --arity 2 --epsilon 1 --delta 1e-6
  fedecdf histogram --input ages.csv --column age --min 18 --max 95 --bins 16 --mechanism counting-on-trees --delta 1e-6 --alpha 0.5 --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("min") || !cmd.Flags().Changed("max") {
				return errors.New("--min and --max are required: the grid must be fixed in advance, because taking the domain from the data would leak private values outside the differential privacy guarantee")
			}
			return runHistogram(cmd, &o)
		},
	}
	f := cmd.Flags()
	addColumnFlags(f, &o.ecdfOptions)
	f.Float64Var(&o.epsilon, "epsilon", 1, "privacy budget ε of the release")
	f.Float64Var(&o.delta, "delta", 0, "δ of (ε, δ)-DP mechanisms (counting-on-trees, cascade, gaussian-tree; auto considers them when δ > 0)")
	f.IntVar(&o.bins, "bins", 64, binsUsageUnlike("keeps the printed levels short (the leaf level prints one count per bin)"))
	addGridFlags(f, &o.ecdfOptions)
	f.StringVar(&o.mechanism, "mechanism", "auto", "node-count mechanism: "+strings.Join(hierarchy.Names, ", "))
	f.StringVar(&o.neighbours, "neighbours", "replace", "neighbouring relation: replace (n public) or addremove")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.BoolVar(&o.clamp, "clamp", false, "clamp values outside [--min, --max] to the end bins instead of failing")
	f.IntVar(&o.arity, "arity", 2, "arity b of the tree (each node has b children)")
	f.Float64Var(&o.alpha, "alpha", 0.1, "multiplicative slack α of the error measure (and of counting-on-trees' thresholds), in [0, 1)")
	return cmd
}

// histogramJSON is the JSON output of histogram (docs/json.md).
type histogramJSON struct {
	Mechanism  string           `json:"mechanism"`
	Epsilon    float64          `json:"epsilon"`
	Delta      float64          `json:"delta"`
	Neighbours string           `json:"neighbours"`
	Alpha      float64          `json:"alpha"`
	Predicted  float64          `json:"predicted_mrmse"`
	Arity      int              `json:"arity"`
	Depth      int              `json:"depth"`
	Bins       int              `json:"bins"`
	Min        float64          `json:"min"`
	Max        float64          `json:"max"`
	Scale      string           `json:"scale"`
	Levels     []histogramLevel `json:"levels"`
}

// histogramLevel is one level of the tree: node j covers bins
// [j·width, min((j+1)·width, bins)), its values up to Upper[j].
type histogramLevel struct {
	Level  int       `json:"level"`
	Width  int       `json:"width"`
	Upper  []float64 `json:"upper"`
	Counts []int64   `json:"counts"`
}

func runHistogram(cmd *cobra.Command, o *histogramOptions) error {
	scale, err := ecdf.ParseScale(o.scale)
	if err != nil {
		return err
	}
	rel, err := mechanism.ParseRelation(o.neighbours)
	if err != nil {
		return fmt.Errorf("--neighbours: %w", err)
	}
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("unknown --format %q (want text or json)", o.format)
	}
	if !(o.alpha >= 0 && o.alpha < 1) {
		return fmt.Errorf("--alpha %v: must be in [0, 1)", o.alpha)
	}
	grid, err := ecdf.NewGrid(scale, o.min, o.max, o.bins)
	if err != nil {
		return err
	}
	m, err := hierarchy.New(o.mechanism, hierarchy.Params{Bins: grid.Len(), Arity: o.arity, Epsilon: o.epsilon,
		Delta: o.delta, Alpha: o.alpha, Relation: rel})
	if err != nil {
		return err
	}
	bins, err := o.binValues(cmd, grid)
	if err != nil {
		return err
	}
	hist, err := ecdf.Histogram(bins, grid.Len())
	if err != nil {
		return err
	}
	seed, err := noise.NewSeed()
	if err != nil {
		return err
	}
	counts, err := m.Release(hist, seed)
	if err != nil {
		return fmt.Errorf("%s: %w", inputName(&o.ecdfOptions), err)
	}
	t := m.Tree()
	out := histogramJSON{Mechanism: m.Name(), Epsilon: m.Epsilon(), Delta: m.Delta(), Neighbours: rel.String(),
		Alpha: o.alpha, Predicted: m.PredictedMRMSE(o.alpha), Arity: t.Arity(), Depth: t.Depth(), Bins: t.Bins(),
		Min: o.min, Max: o.max, Scale: scale.String()}
	for l, row := range counts {
		lv := histogramLevel{Level: l, Width: t.Width(l), Counts: row}
		for j := range row {
			_, hi := t.Range(l, j)
			lv.Upper = append(lv.Upper, grid.Threshold(hi))
		}
		out.Levels = append(out.Levels, lv)
	}
	if o.format == "json" {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	return writeHistogramText(cmd.OutOrStdout(), out)
}

// writeHistogramText prints the guarantee and each level's counts.
func writeHistogramText(w io.Writer, h histogramJSON) error {
	fmt.Fprintf(w, "hierarchical histogram: %d bins on [%g, %g] (%s), tree of arity %d and depth %d\n", h.Bins, h.Min, h.Max, h.Scale, h.Arity, h.Depth)
	fmt.Fprintf(w, "mechanism %s: (ε = %g, δ = %g)-DP under %s; predicted worst-case α-mRMSE per node at α = %g: %.1f\n",
		h.Mechanism, h.Epsilon, h.Delta, h.Neighbours, h.Alpha, h.Predicted)
	for _, lv := range h.Levels {
		fmt.Fprintf(w, "level %d (%d node(s) of %d bin(s)):", lv.Level, len(lv.Counts), lv.Width)
		for _, c := range lv.Counts {
			fmt.Fprintf(w, " %d", c)
		}
		fmt.Fprintln(w)
	}
	return nil
}
