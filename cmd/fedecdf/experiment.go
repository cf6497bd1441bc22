package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/fedecdf/fedecdf/internal/experiment"
	"github.com/spf13/cobra"
)

// newExperimentCommand builds the "experiment" command.
func newExperimentCommand() *cobra.Command {
	cfg := experiment.DefaultConfig()
	var out string
	var only []string
	cmd := &cobra.Command{
		Use:   "experiment",
		Short: "Reproduce the figures of dp-ecdf §6 as CSV and PNG",
		Long: `experiment reproduces the experiments of dp-ecdf §6 with the paper's settings
(100 runs per point, X_pois(λ) over N = 2^15 values, Bank and Diabetes scored
by a logistic regression) for the paper's tree mechanism and the better ones
(kary, cascade, auto), writing ID.csv and ID.png per figure into --out.

Experiments run with a trusted curator (one noise draw per release); the
two-server deployments add one full-scale draw per server, i.e. twice each
MSE here, and nothing else. Issue 15's measurements (hl-typeI, ci-coverage)
use the two-server noise law, and hl-simulate runs simulate itself on
calibrated data; --hl-n, --hl-epsilons and --hl-bootstrap set them.
Figures: ` + figureList(),
		Example: `  fedecdf experiment --out docs/experiments
  fedecdf experiment --only fig4 --runs 20 --out /tmp/fig
  fedecdf experiment --only hl-typeI --runs 500 --hl-n 10000 --hl-bootstrap 19 --out /tmp/hl
  fedecdf experiment --only hl-simulate,ci-coverage --runs 200 --hl-n 10000 --out /tmp/hl
  fedecdf experiment --only ci-coverage --runs 200 --cells 'n=100 eps=1 servers=2' --out /tmp/ci`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Runs < 1 {
				return fmt.Errorf("--runs %d is not positive", cfg.Runs)
			}
			for _, b := range []struct {
				flag string
				n    int
			}{{"--bins", cfg.Bins}, {"--data-bins", cfg.DataBins}} {
				if b.n < 1 {
					return fmt.Errorf("%s %d is not positive: give the number of bins of the grid", b.flag, b.n)
				}
			}
			if p := newProgress(cmd.ErrOrStderr(), true); p != nil {
				cfg.Progress = p
			}
			figs, err := experiment.Run(cmd.Context(), cfg, only)
			if serr := saveFigures(cmd.OutOrStdout(), figs, out); serr != nil {
				return serr
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Runs, "runs", cfg.Runs, "runs averaged per point")
	f.StringVar(&out, "out", "experiments", "output directory")
	f.StringSliceVar(&only, "only", nil, "figures to compute, comma-separated (default all)")
	f.Float64SliceVar(&cfg.Epsilons, "epsilons", cfg.Epsilons, "ε axis")
	f.Float64SliceVar(&cfg.Lambdas, "lambdas", cfg.Lambdas, "λ axis of fig3")
	f.Float64Var(&cfg.Lambda, "lambda", cfg.Lambda, "λ of X_pois in the figures against ε")
	f.IntVar(&cfg.Bins, "bins", cfg.Bins, binsUsageUnlike("is the N of dp-ecdf §6's X_pois, whose figures the command reproduces"))
	f.IntSliceVar(&cfg.Sizes, "sizes", cfg.Sizes, "N axis of fig7")
	f.StringSliceVar(&cfg.Mechanisms, "mechanisms", cfg.Mechanisms, "mechanisms compared (tree is the paper's)")
	f.Float64Var(&cfg.Delta, "delta", cfg.Delta, "δ of the (ε, δ) mechanisms (cascade)")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the simulated data and train/test split (noise: crypto/rand)")
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory of bank-full.csv and diabetic_data.csv (figures needing an absent file are skipped)")
	f.IntVar(&cfg.DataBins, "data-bins", cfg.DataBins, "N of the probability grid of fig5, fig6, fig10")
	f.IntSliceVar(&cfg.HLSizes, "hl-n", cfg.HLSizes, "data-set sizes n of hl-typeI, hl-simulate and ci-coverage")
	f.Float64SliceVar(&cfg.HLEpsilons, "hl-epsilons", cfg.HLEpsilons, "ε axis of hl-typeI and ci-coverage")
	f.StringVar(&cfg.Cells, "cells", "", "cells of ci-coverage's grid n × eps × prev × rel × servers, e.g. 'n=50,100 eps=1 servers=2' (a key left out keeps its whole axis: n 50…10⁵, eps 0.1,0.5,1,4, prev 0.05,0.3, rel replace,addremove, servers 1,2); empty: --hl-n × --hl-epsilons at prevalence 0.3, replace, 2 servers")
	f.IntVar(&cfg.HLDraws, "hl-bootstrap", cfg.HLDraws, "bootstrap B of hl-typeI's noise-aware test (its exact level is ⌊α(B+1)⌋/(B+1); hl-simulate uses simulate's default)")
	return cmd
}

// saveFigures saves figs into dir, printing to w each file written and
// each figure's notes.
func saveFigures(w io.Writer, figs []*experiment.Figure, dir string) error {
	for _, f := range figs {
		paths, err := f.Save(dir)
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Fprintln(w, "wrote", p)
		}
		for _, n := range f.Notes {
			fmt.Fprintf(w, "%s: %s\n", f.ID, n)
		}
	}
	return nil
}

// figureList lists the figures experiment can compute.
func figureList() string {
	ids := experiment.IDs()
	keys := make([]string, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += "\n  " + k + ": " + ids[k]
	}
	return s
}
