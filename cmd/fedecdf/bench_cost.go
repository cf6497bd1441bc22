package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// benchCostOptions are the flags of "fedecdf bench cost".
type benchCostOptions struct {
	parties, prefixes []int
	backends          []string
	bins              int
}

// newBenchCostCommand builds "bench cost", which prints the README's
// secure-sum cost table from simulate runs.
func newBenchCostCommand() *cobra.Command {
	var o benchCostOptions
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Print the secure-sum communication cost table (from simulate runs)",
		Long: `bench cost runs "fedecdf simulate --format json --mechanism tree" in-process
for every n of --parties, |B| of --prefixes and backend of --backends, on
a grid of --bins bins, and prints its cost fields (bytes per party and in
total, over the whole run: the ECDF, ROC/PR and Hosmer–Lemeshow releases
and their query batches) as a Markdown table, the one in the README.`,
		Example: `  fedecdf bench cost --parties 200 --prefixes 4,16 --bins 64`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&o.parties, "parties", []int{1000, 10000}, "numbers of parties n, comma-separated")
	f.IntSliceVar(&o.prefixes, "prefixes", []int{16, 1024}, "numbers |B| of thresholds queried, comma-separated (each at most --bins)")
	f.StringSliceVar(&o.backends, "backends", []string{"additive", "dcf"}, "secure-sum backends, comma-separated: additive, dcf")
	f.IntVar(&o.bins, "bins", 1024, binsUsageUnlike("is the grid the README's cost table was measured on"))
	return cmd
}

// benchCost is the cost object of simulate's JSON output.
type benchCost struct {
	Cost struct {
		BytesPerParty float64 `json:"bytes_per_party"`
		BytesTotal    int64   `json:"bytes_total"`
	} `json:"cost"`
}

// run prints one table row per (n, |B|) with each backend's columns.
func (o *benchCostOptions) run(w io.Writer) error {
	for _, b := range o.backends {
		if b != "additive" && b != "dcf" {
			return fmt.Errorf("--backends: %q: want additive or dcf (plain has no secure sum)", b)
		}
	}
	head := []string{"n", `\|B\|`}
	for _, b := range o.backends {
		head = append(head, b+" B/party", b+" total B")
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, n := range o.parties {
		for _, p := range o.prefixes {
			row := []string{groupDigits(int64(n)), groupDigits(int64(p))}
			for _, b := range o.backends {
				c, err := o.cost(n, p, b)
				if err != nil {
					return fmt.Errorf("n %d, |B| %d, %s: %w", n, p, b, err)
				}
				row = append(row, groupDigits(int64(c.Cost.BytesPerParty+0.5)), groupDigits(c.Cost.BytesTotal))
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
	return nil
}

// cost runs simulate once and decodes its cost fields.
func (o *benchCostOptions) cost(n, prefixes int, backend string) (*benchCost, error) {
	cmd := newSimulateCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"--parties", strconv.Itoa(n), "--backend", backend, "--bins", strconv.Itoa(o.bins),
		"--prefixes", strconv.Itoa(prefixes), "--mechanism", "tree", "--format", "json"})
	if err := cmd.Execute(); err != nil {
		return nil, err
	}
	var c benchCost
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		return nil, fmt.Errorf("simulate's JSON: %w", err)
	}
	return &c, nil
}

// groupDigits writes n with thousands separated by commas.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
