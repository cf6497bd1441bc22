package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/dataset"
	"github.com/fedecdf/fedecdf/deploy"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/party"
)

func init() {
	var manifestPath, csvPath, scoreCol, labelCol, probCol, positive, logLevel string
	var inst party.Instance
	var concurrency int
	cmd := &cobra.Command{
		Use:   "party --manifest FILE (--score S --label Y [--probability P] | --csv FILE)",
		Short: "Submit one record (or one report per CSV row, each a separate party) to both servers",
		Long: `Submit reports in the manifest's upload mode: "direct", each server receives
its own DCF key over a Noise channel to it; or "relay", the party talks to
the leader only and the helper's key is HPKE-sealed to the helper's public
key in the manifest (RFC 9180, as in IETF DAP), so the leader relays it
without reading it. The exit status is 0 only if both servers acknowledged
(durably stored) every report.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(logLevel)
			if err != nil {
				return err
			}
			m, err := deploy.ReadManifest(manifestPath)
			if err != nil {
				return err
			}
			var all []party.Instance
			switch {
			case csvPath != "" && (cmd.Flags().Changed("score") || cmd.Flags().Changed("label")):
				return fmt.Errorf("give either --csv or --score/--label, not both")
			case csvPath != "":
				scores, labels, err := dataset.ReadScored(csvPath, scoreCol, labelCol, positive)
				if err != nil {
					return err
				}
				probs, err := csvProbabilities(csvPath, probCol, len(scores))
				if err != nil {
					return err
				}
				for k := range scores {
					inst := party.Instance{Score: scores[k], Label: labels[k]}
					if probs != nil {
						inst.Probability, inst.HasProbability = probs[k], true
					}
					all = append(all, inst)
				}
			case cmd.Flags().Changed("score") && cmd.Flags().Changed("label"):
				inst.HasProbability = cmd.Flags().Changed("probability")
				all = []party.Instance{inst}
			default:
				return fmt.Errorf("give --score and --label, or --csv")
			}
			n, err := deploy.SubmitAll(cmd.Context(), m, all, p2p.Config{Logger: logger}, concurrency, false)
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d report(s) acknowledged by both servers\n", n, len(all))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&manifestPath, "manifest", "manifest.json", "deployment manifest")
	f.Float64Var(&inst.Score, "score", 0, "the record's score")
	f.IntVar(&inst.Label, "label", 0, "the record's label, 0 or 1")
	f.Float64Var(&inst.Probability, "probability", 0, "the record's predicted probability of label 1, in [0, 1]")
	f.StringVar(&csvPath, "csv", "", "CSV file: one report per row")
	f.StringVar(&scoreCol, "score-column", "score", "score column of --csv")
	f.StringVar(&labelCol, "label-column", "label", "label column of --csv")
	f.StringVar(&probCol, "probability-column", "", "predicted-probability column of --csv (needed by the Hosmer–Lemeshow query; may be the score column)")
	f.StringVar(&positive, "positive", "", `positive label value of --csv ("" means 0/1 labels, "!v" means not v)`)
	f.IntVar(&concurrency, "concurrency", 8, "reports in flight at once with --csv")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	rootCmd.AddCommand(cmd)
}

// csvProbabilities reads column of path, one probability per report, or
// returns nil when column is empty.
func csvProbabilities(path, column string, n int) ([]float64, error) {
	if column == "" {
		return nil, nil
	}
	probs, err := dataset.ReadColumn(path, column, 0)
	if err != nil {
		return nil, err
	}
	if len(probs) != n {
		return nil, fmt.Errorf("%s: %d probabilities in column %q for %d scored rows", path, len(probs), column, n)
	}
	return probs, nil
}
