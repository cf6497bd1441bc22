// Command fedecdf computes differentially private empirical CDFs, quantiles,
// ROC/PR curves and the Hosmer–Lemeshow statistic, either on one machine or
// across many parties and two non-colluding servers.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:   "fedecdf",
	Short: "Federated, differentially private ECDFs, quantiles, ROC/PR curves and Hosmer–Lemeshow",
	Long: `fedecdf lets many parties, each holding one private record, compute together
with differential privacy a complete empirical CDF, its inverse (quantiles),
ROC and PR curves and the Hosmer–Lemeshow calibration statistic, through two
non-colluding servers that never see a record.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "fedecdf:", err)
		os.Exit(1)
	}
}
