package main

import (
	"fmt"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/spf13/cobra"
)

// addIntervalDrawsFlag gives cmd the --interval-draws flag, bound to
// draws: the number B of Monte-Carlo draws of the release's noise behind
// the ECDF band and the quantile and AUC intervals and the ROC band
// (analysis.DefaultIntervalDraws by default), 0 to leave them out. A
// negative B is refused before the command runs.
func addIntervalDrawsFlag(cmd *cobra.Command, draws *int) {
	cmd.Flags().IntVar(draws, "interval-draws", analysis.DefaultIntervalDraws,
		"Monte-Carlo draws B of the public noise law behind the 95 % intervals (ECDF band, quantile and AUC intervals, ROC band; s.e. of each interval's coverage ≈ √(0.05·0.95/B)); 0: no intervals")
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if *draws < 0 {
			return fmt.Errorf("--interval-draws %d: want 0 (no intervals) or more", *draws)
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}
