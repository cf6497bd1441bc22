package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/bench"
)

// newBenchFSSCommand builds the "bench fss" command.
func newBenchFSSCommand() *cobra.Command {
	var format string
	var keys, bins int
	var verify, probability bool
	var minTime time.Duration
	cmd := &cobra.Command{
		Use:   "fss",
		Short: "Speed of the DCF: key size, Gen, Eval and the servers' batch evaluator vs crypto/aes CTR",
		Long: `fss measures, in one run, the distributed comparison function at n = 16 bits
and m = 3 payload components: encoded key size (against the BCG+21 formula),
Gen and pointwise Eval time, and the batch evaluator SumBatch on one goroutine
for B ∈ {64, 1024, 2^16} evenly spaced points (2^16 is the full domain): ns per
key and point, per key and tree node, and per AES block, with the number of
AES blocks per key. Times are process CPU time, which a shared machine's
other load does not inflate. ratio is ns per AES block spent in the batch
evaluator divided by ns per block of the crypto/aes CTR keystream measured
in the same process (below 1 on a CPU with VAES, whose PRG path runs two
blocks per instruction where the CTR keystream runs one: README, "Function
secret sharing speed"); the constant ns per key and node across B shows the
work grows as keys × distinct nodes. A last figure gives the full-domain
speedup on GOMAXPROCS goroutines, in wall time.

With --verify it compares instead, in one run at --bins bins, the unverified
DCF upload (Z_2^64 keys with the four payload components, folded summed over
keys) with the verified one (internal/vdcf: field keys checked on the
servers' shares): bytes uploaded per server (the verified leader's and
helper's shares differ by one field element; their ratios to the unverified
key and the mean ratio), bytes exchanged between the servers, the party's
key generation, and one server's CPU per report (process
CPU time over all goroutines, median of 5 alternating timings), split into
the per-key full-domain evaluation, the check and the fold. With
--probability the verified reports also carry the probability, checked in
range and at the record's bin, as a dataset that collects it has them.`,
		Example: `  fedecdf bench fss
  fedecdf bench fss --keys 64 --min-time 100ms --format json
  fedecdf bench fss --verify --bins 1024 --min-time 1s
  fedecdf bench fss --verify --probability --bins 1024`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("format %q: want text or json", format)
			}
			if probability && !verify {
				return fmt.Errorf("--probability is an option of the --verify comparison: add --verify")
			}
			var rep interface {
				WriteJSON(io.Writer) error
				WriteText(io.Writer) error
			}
			var err error
			if verify {
				cfg := bench.DefaultVerifyConfig()
				cfg.Bins, cfg.Reports, cfg.MinTime, cfg.Probability = bins, keys, minTime, probability
				rep, err = bench.MeasureVerify(cfg)
			} else {
				cfg := bench.DefaultFSSConfig()
				cfg.Keys, cfg.MinTime = keys, minTime
				rep, err = bench.MeasureFSS(cfg)
			}
			if err != nil {
				return err
			}
			if format == "json" {
				return rep.WriteJSON(cmd.OutOrStdout())
			}
			return rep.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().IntVar(&keys, "keys", 256, "keys summed by each batch evaluation (with --verify: reports per timing)")
	cmd.Flags().BoolVar(&verify, "verify", false, "compare the unverified and the verified DCF upload instead")
	cmd.Flags().IntVar(&bins, "bins", 1024, binsUsageUnlike("is bench cost's grid, the README cost table's (used by the --verify comparison)"))
	cmd.Flags().BoolVar(&probability, "probability", false, "with --verify: the verified reports carry the probability too")
	cmd.Flags().DurationVar(&minTime, "min-time", 300*time.Millisecond, "minimum duration of each timing")
	return cmd
}
