package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/spf13/cobra"
)

// addOrderFlag gives cmd the --order flag, bound to order: the order of
// the ROC and PR arrays in JSON output (analysis.ROC.InOrder), fedecdf's
// threshold order by default or scikit-learn's. An unknown order is
// refused before the command runs.
func addOrderFlag(cmd *cobra.Command, order *string) {
	cmd.Flags().StringVar(order, "order", analysis.OrderThreshold,
		"order of the ROC and PR arrays in JSON: "+strings.Join(analysis.Orders, " or ")+" (scikit-learn's: fpr, tpr ascending from (0, 0), thresholds descending, PR ending in recall 0, precision 1)")
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if !slices.Contains(analysis.Orders, *order) {
			return fmt.Errorf("--order %q: want %s", *order, strings.Join(analysis.Orders, " or "))
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}
