// Command fedecdf computes differentially private empirical CDFs, quantiles,
// ROC/PR curves and the Hosmer–Lemeshow statistic, either on one machine or
// across many parties and two non-colluding servers.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := newRootCommand()
	if err := root.Execute(); err != nil {
		fmt.Fprintln(root.ErrOrStderr(), "fedecdf:", err)
		os.Exit(1)
	}
}

// newRootCommand builds the fedecdf command and its subcommands, each
// with flags of its own, so tests can run any of them in-process.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "fedecdf",
		Short: "Federated, differentially private ECDFs, quantiles, ROC/PR curves and Hosmer–Lemeshow",
		Long: `fedecdf lets many parties, each holding one private record, compute together
with differential privacy a complete empirical CDF, its inverse (quantiles),
ROC and PR curves and the Hosmer–Lemeshow calibration statistic, through two
non-colluding servers that never see a record.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newECDFCommand(),
		newSimulateCommand(),
		newExperimentCommand(),
		newAuditCommand(),
		newBenchCommand(),
		newKeygenCommand(),
		newManifestCommand(),
		newServerCommand(),
		newPartyCommand(),
		newQueryCommand(),
		newDemoCommand(),
	)
	return root
}
