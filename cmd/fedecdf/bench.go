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
DCF's speed against crypto/aes; "bench cost" prints the secure-sum
communication table of the README from simulate runs; "bench ingest"
uploads reports to two server processes on loopback and reports their
CPU and disk writes per report, checking no report was lost or stored
twice.`,
		Example: `  fedecdf bench accuracy --runs 3 --format json
  fedecdf bench fss --keys 64
  fedecdf bench cost --parties 200 --prefixes 4,16 --bins 64
  fedecdf bench ingest --parties 5000 --connections reuse`,
	}
	cmd.AddCommand(newBenchAccuracyCommand(), newBenchTreesCommand(), newBenchFSSCommand(), newBenchCostCommand(), newBenchIngestCommand())
	return cmd
}
