package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/fedecdf/fedecdf/simulate"
	"github.com/spf13/cobra"
)

func init() {
	var cfg simulate.Config
	var format string
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run parties, two servers and an analyst in one process and compare the private ECDF with the true one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Data != "" && !cmd.Flags().Changed("parties") {
				cfg.Parties = 0 // every row of the file
			}
			if format != "text" && format != "json" {
				return fmt.Errorf("--format %q: want text or json", format)
			}
			r, err := simulate.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			return r.WriteText(os.Stdout)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Parties, "parties", 1000, "number of parties n (with --data: the first n rows; default every row)")
	f.StringVar(&cfg.Backend, "backend", "dcf", "secure-sum backend: plain, additive or dcf")
	f.StringVar(&cfg.Data, "data", "", "CSV file of scores and labels (default: built-in synthetic data)")
	f.StringVar(&cfg.ScoreCol, "score", "score", "score column of --data")
	f.StringVar(&cfg.LabelCol, "label", "label", "label column of --data")
	f.StringVar(&cfg.Positive, "positive", "", `positive label value of --data ("" means 0/1 labels, "!v" means not v)`)
	f.Float64Var(&cfg.Epsilon, "epsilon", 1, "privacy budget ε of the release")
	f.StringVar(&cfg.Mechanism, "mechanism", "auto", "noise mechanism: tree, kary, cascade, gaussian-tree or auto")
	f.IntVar(&cfg.Bins, "bins", 256, "number of bins N of the grid")
	f.Float64Var(&cfg.Min, "min", 0, "grid minimum")
	f.Float64Var(&cfg.Max, "max", 1, "grid maximum")
	f.IntVar(&cfg.Prefixes, "prefixes", 0, "number |B| of evenly spaced thresholds queried (default all N)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the built-in data")
	f.StringVar(&format, "format", "text", "output format: text or json")
	rootCmd.AddCommand(cmd)
}
