package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/dataset"
	"github.com/fedecdf/fedecdf/deploy"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/party"
)

// partyOptions are the flags of "fedecdf party".
type partyOptions struct {
	manifest, csv, scoreCol, labelCol, probCol, positive, logLevel string
	inst                                                           party.Instance
	concurrency                                                    int
}

// newPartyCommand builds the "party" command.
func newPartyCommand() *cobra.Command {
	var o partyOptions
	cmd := &cobra.Command{
		Use:   "party --manifest FILE (--score S --label Y [--probability P] | --csv FILE)",
		Short: "Submit one record (or one report per CSV row, each a separate party) to both servers",
		Long: `Submit reports in the manifest's upload mode: "direct", each server receives
its own DCF key over a Noise channel to it; or "relay", the party talks to
the leader only and the helper's key is HPKE-sealed to the helper's public
key in the manifest (RFC 9180, as in IETF DAP), so the leader relays it
without reading it. The exit status is 0 only if both servers acknowledged
(durably stored) every report.`,
		Example: `  # One record, against the servers of manifest.json (see fedecdf manifest --help)
  fedecdf party --manifest manifest.json --score 0.83 --label 1 --probability 0.83

  # One report per row of a CSV file with 0/1 labels (here made by awk)
  awk 'BEGIN { srand(1); print "score,label"; for (i = 0; i < 2000; i++) { s = rand(); print s "," (rand() < s) } }' > scores.csv
  fedecdf party --manifest manifest.json --csv scores.csv --score-column score --label-column label --probability-column score`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.manifest, "manifest", "manifest.json", "deployment manifest")
	f.Float64Var(&o.inst.Score, "score", 0, "the record's score")
	f.IntVar(&o.inst.Label, "label", 0, "the record's label, 0 or 1")
	f.Float64Var(&o.inst.Probability, "probability", 0, "the record's predicted probability of label 1, in [0, 1]")
	f.StringVar(&o.csv, "csv", "", "CSV file: one report per row")
	f.StringVar(&o.scoreCol, "score-column", "score", "score column of --csv")
	f.StringVar(&o.labelCol, "label-column", "label", "label column of --csv")
	f.StringVar(&o.probCol, "probability-column", "", "predicted-probability column of --csv (needed by the Hosmer–Lemeshow query; may be the score column)")
	f.StringVar(&o.positive, "positive", "", `positive label value of --csv ("" means 0/1 labels, "!v" means not v)`)
	f.IntVar(&o.concurrency, "concurrency", 8, "reports in flight at once with --csv")
	f.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	return cmd
}

// run submits the records and says how many both servers acknowledged.
func (o *partyOptions) run(cmd *cobra.Command, _ []string) error {
	logger, err := newLogger(cmd.ErrOrStderr(), o.logLevel)
	if err != nil {
		return err
	}
	if o.concurrency < 1 {
		return fmt.Errorf("--concurrency %d is not positive: give how many reports may be in flight at once (default 8)", o.concurrency)
	}
	m, err := deploy.ReadManifest(o.manifest)
	if err != nil {
		return err
	}
	all, err := o.instances(cmd)
	if err != nil {
		return err
	}
	n, err := deploy.SubmitAll(cmd.Context(), m, all, p2p.Config{Logger: logger}, o.concurrency, false)
	fmt.Fprintf(cmd.OutOrStdout(), "%d of %d report(s) acknowledged by both servers\n", n, len(all))
	return err
}

// instances are the records to submit: one per row of --csv, or the one
// given by --score and --label.
func (o *partyOptions) instances(cmd *cobra.Command) ([]party.Instance, error) {
	changed := cmd.Flags().Changed
	switch {
	case o.csv != "" && (changed("score") || changed("label")):
		return nil, fmt.Errorf("give either --csv or --score/--label, not both")
	case o.csv != "":
		return o.csvInstances()
	case changed("score") && changed("label"):
		inst := o.inst
		inst.HasProbability = changed("probability")
		return []party.Instance{inst}, nil
	default:
		return nil, fmt.Errorf("give --score and --label, or --csv")
	}
}

// csvInstances reads one record per row of --csv.
func (o *partyOptions) csvInstances() ([]party.Instance, error) {
	scores, labels, err := dataset.ReadScored(o.csv, o.scoreCol, o.labelCol, o.positive)
	if err != nil {
		return nil, err
	}
	probs, err := csvProbabilities(o.csv, o.probCol, len(scores))
	if err != nil {
		return nil, err
	}
	var all []party.Instance
	for k := range scores {
		inst := party.Instance{Score: scores[k], Label: labels[k]}
		if probs != nil {
			inst.Probability, inst.HasProbability = probs[k], true
		}
		all = append(all, inst)
	}
	return all, nil
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
