package main

import "github.com/spf13/cobra"

// newBenchCommand builds the "bench" command, which groups the
// measurements that report ratios taken in one run.
func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure speed and accuracy (ratios taken in one run)",
		Long: `bench groups the measurements that report ratios taken in one run, so that
they compare like with like on the machine at hand: "bench accuracy" the
prefix error of every noise mechanism against the tree's, "bench fss" the
DCF's speed against crypto/aes.`,
		Example: `  fedecdf bench accuracy --runs 3 --format json
  fedecdf bench fss --keys 64`,
	}
	cmd.AddCommand(newBenchAccuracyCommand(), newBenchFSSCommand())
	return cmd
}
