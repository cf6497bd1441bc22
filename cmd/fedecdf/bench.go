package main

import "github.com/spf13/cobra"

// benchCmd groups the measurements that report ratios taken in one run.
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Measure speed and accuracy (ratios taken in one run)",
}

func init() { rootCmd.AddCommand(benchCmd) }
