package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/dataset"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
)

// partyOptions are the flags of "fedecdf party".
type partyOptions struct {
	manifest, csv, scoreCol, labelCol, probCol, positive, logLevel, rowKey string
	inst                                                                   party.Instance
	concurrency                                                            int
	retryWindow                                                            time.Duration
	// missing is --missing; dataRows, after a --missing skip that left
	// rows out, is the file's 1-based data row of each kept row (nil
	// when every row is kept: row k+1 is then the (k+1)-th).
	missing  string
	dataRows []int
}

// newPartyCommand builds the "party" command.
func newPartyCommand() *cobra.Command {
	var o partyOptions
	cmd := &cobra.Command{
		Use:   "party --manifest FILE (--score-value S --label-value Y [--probability-value P] | --input FILE)",
		Short: "Submit one record (or one report per CSV row, each a separate party) to both servers",
		Long: `Submit reports in the manifest's upload mode: "direct", each server
receives its own share of the report over a Noise channel to it; or
"relay", the party talks to the leader only and the helper's share is
HPKE-sealed to the helper's public key in the manifest (RFC 9180, as in
IETF DAP), so the leader relays it without reading it. When the manifest gives a server an upload address
(upload_addr), the party uploads to it over one plain TCP connection,
the upload HPKE-sealed to that server and its acknowledgement checked
by a MAC, instead of over libp2p. The exit status is 0 only if both
servers acknowledged (durably stored) every report.

With --input every row is checked (grid range, NaN, labels, probabilities)
before the first upload, and each row's report ID and shares are derived
from a secret row key (--row-key, created on first use), the row's
values and its occurrence number among identical rows, not its position,
so rerunning after a failure, or on the same rows exported again in
another order, stores nothing twice: rows the servers already hold are
recognised. An edited row is a new row: the servers keep every accepted
report, so its old version stays stored; the run says how many rows
changed (were edited or removed) since the last upload, which the row
key's side file (ROWKEY.uploaded) remembers.

Each upload goes to both servers at once; a server that does not answer
(refused, reset, unreachable, timed out) is retried with exponential
backoff for --retry-window, long enough for a server restart, and only
the server that has not acknowledged is retried. Each attempt
(connecting, sending, reading the answer) is bounded by 20 s, so an
upload gives up within --retry-window plus 20 s whatever the server does
(stalls, is stopped, drops packets); a server shedding load closes the
connection at once, and the attempt is retried. An upload that still
fails stops the run: the party says which server failed and why, which
rows both servers hold, which rows one server alone acknowledged, and which rows
a rerun will store. With direct uploads a party must reach both servers'
addresses (TCP); in relay mode the leader's only.`,
		Example: `  # One record, against the servers of manifest.json (see fedecdf manifest --help)
  fedecdf party --manifest manifest.json --score-value 0.83 --label-value 1 --probability-value 0.83

  # One report per row of a CSV file with 0/1 labels (here made by awk)
  awk 'BEGIN { srand(1); print "score,label"; for (i = 0; i < 2000; i++) { s = rand(); print s "," (rand() < s) } }' > scores.csv
  fedecdf party --manifest manifest.json --input scores.csv --score-column score --label-column label --probability-column score`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.manifest, "manifest", "manifest.json", "deployment manifest")
	f.Float64Var(&o.inst.Score, "score-value", 0, "the record's score")
	f.IntVar(&o.inst.Label, "label-value", 0, "the record's label, 0 or 1")
	f.Float64Var(&o.inst.Probability, "probability-value", 0, "the record's predicted probability of label 1, in [0, 1]")
	f.StringVar(&o.rowKey, "row-key", "", "secret key file of --input's report IDs, created (mode 0600) if missing; keep it to rerun safely (default: the CSV file's name + .rowkey)")
	f.StringVar(&o.csv, "input", "", "CSV file: one report per row")
	f.StringVar(&o.scoreCol, "score-column", "score", "score column of --input")
	f.StringVar(&o.labelCol, "label-column", "label", "label column of --input")
	f.StringVar(&o.probCol, "probability-column", "", "predicted-probability column of --input (needed by the Hosmer–Lemeshow query; may be the score column)")
	f.StringVar(&o.missing, "missing", "error", `rows of --input missing the score, the label or the probability ("", "?", "NA", "NaN", "null"): error, or skip to leave each such row out whole (the party counts them; row numbers stay the file's)`)
	f.StringVar(&o.positive, "positive", "", `positive label value of --input ("" means 0/1 labels, "!v" means not v)`)
	f.IntVar(&o.concurrency, "concurrency", 8, "reports in flight at once with --input")
	f.DurationVar(&o.retryWindow, "retry-window", time.Minute, "how long an upload to a server that does not answer is retried (e.g. 30s, 5m)")
	f.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	addDeprecatedFlags(cmd)
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
	if o.retryWindow <= 0 {
		return fmt.Errorf("--retry-window %v is not positive: give how long to retry a server that does not answer (default 1m0s)", o.retryWindow)
	}
	m, err := manifest.ReadManifest(o.manifest)
	if err != nil {
		return err
	}
	all, err := o.instances(cmd)
	if err != nil {
		return err
	}
	tc := p2p.Config{Logger: logger, RetryWindow: o.retryWindow}
	if o.csv != "" {
		return o.submitRows(cmd, m, all, tc)
	}
	if err := client.ValidateRows(m, all); err != nil {
		return fmt.Errorf("the record given by --score-value, --label-value: %w; nothing was uploaded", errors.Unwrap(err))
	}
	n, err := client.SubmitAll(cmd.Context(), m, all, tc, o.concurrency, false)
	fmt.Fprintf(cmd.OutOrStdout(), "%d of %d report(s) acknowledged by both servers\n", n, len(all))
	return err
}

// submitRows uploads one report per row of --input under IDs keyed by the
// row key, with a progress bar on a terminal, and on a failure says which
// rows both servers hold and that a rerun resumes.
func (o *partyOptions) submitRows(cmd *cobra.Command, m *manifest.Manifest, all []party.Instance, tc p2p.Config) error {
	if err := o.validateRows(m, all); err != nil {
		return fmt.Errorf("%s: %w; nothing was uploaded: fix the row and run again", o.csv, err)
	}
	keyPath := o.rowKey
	if keyPath == "" {
		keyPath = o.csv + ".rowkey"
	}
	key, created, err := client.LoadRowKey(keyPath)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(cmd.ErrOrStderr(), "fedecdf: created row key %s: keep it to rerun this file safely "+
			"(a new key: rows uploaded before under another key, such as this file's under another name, are stored again; "+
			"pass that key with --row-key instead)\n", keyPath)
	}
	ids := client.RowReportIDs(key, m.Dataset, all)
	uploaded := client.UploadedRowsPath(keyPath)
	prev := map[payload.ReportID]bool{}
	if !created {
		if prev, err = client.ReadUploadedRows(uploaded); err != nil {
			return err
		}
	}
	bar := newProgress(cmd.ErrOrStderr(), false)
	bar.Start("uploading "+o.csv, len(all))
	res, err := client.SubmitRows(cmd.Context(), m, all, key, tc, o.concurrency, func(int, bool) { bar.Add(1) })
	if bar != nil && err == nil {
		bar.Finish()
	}
	out := cmd.OutOrStdout()
	n := res.Count()
	fmt.Fprintf(out, "%d of %d row(s) stored by both servers", n, len(all))
	if res.Duplicates > 0 {
		fmt.Fprintf(out, " (%d already stored by an earlier run or attempt)", res.Duplicates)
	}
	fmt.Fprintln(out)
	if changed := client.ChangedRows(prev, ids); changed > 0 {
		fmt.Fprintf(out, "%s changed since the last upload: their old versions stay stored — the servers keep every accepted report "+
			"(an edited or removed row counts; a moved row does not)\n", count(changed, "row"))
	}
	if werr := recordUploaded(uploaded, prev, ids, res, err == nil); werr != nil {
		err = errors.Join(err, werr)
	}
	if err == nil {
		return nil
	}
	printHeld(out, res, o.dataRows)
	if o.dataRows != nil {
		err = fmt.Errorf("%w\n(--missing skip left rows out: a data row named in the error counts the rows kept; the rows listed above are the file's)", err)
	}
	return fmt.Errorf("%w\nstopped at the first row still failing after --retry-window %v; rerun the same command (same --input and --row-key %s) to store the missing rows: rows already stored are recognised by their report IDs and not stored twice", err, o.retryWindow, keyPath)
}

// recordUploaded writes the side file of the row key: after a complete
// run the IDs of the file's rows, after a failed one those of the last
// complete run and the rows stored since, so that the next run reports
// the rows edited since the last upload.
func recordUploaded(path string, prev map[payload.ReportID]bool, ids []payload.ReportID, res *client.RowResult, complete bool) error {
	now := map[payload.ReportID]bool{}
	if !complete {
		maps.Copy(now, prev)
	}
	for k, id := range ids {
		if res.Held[k] == client.HeldByBoth {
			now[id] = true
		}
	}
	return client.WriteUploadedRows(path, now)
}

// printHeld says, after a failed run, which rows both servers hold,
// which one server alone acknowledged (the other may hold them too, its
// acknowledgement lost), and which a rerun will store (1-based data
// rows).
func printHeld(out io.Writer, res *client.RowResult, rows []int) {
	if res.Count() > 0 {
		fmt.Fprintf(out, "stored by both servers (row 1 is the first after the header): %s\n", rowRangesOf(res.Rows(client.HeldByBoth), rows))
	}
	for _, h := range []client.Held{client.HeldByLeader, client.HeldByHelper} {
		if held := rowRangesOf(res.Rows(h), rows); held != "" {
			fmt.Fprintf(out, "acknowledged by %v (the other may hold them too, if its acknowledgement was lost): %s\n", h, held)
		}
	}
	missing := res.Rows(client.HeldByBoth)
	for k := range missing {
		missing[k] = !missing[k]
	}
	fmt.Fprintf(out, "not acknowledged by both servers (a rerun stores them): %s\n", rowRangesOf(missing, rows))
}

// rowRanges lists the 1-based rows k with stored[k−1] as ranges, "1–57, 59".
func rowRanges(stored []bool) string { return rowRangesOf(stored, nil) }

// rowRangesOf is rowRanges with row k+1 numbered rows[k] (nil: k+1): the
// file's data rows when --missing skip left some out.
func rowRangesOf(stored []bool, rows []int) string {
	num := func(k int) int {
		if rows == nil {
			return k + 1
		}
		return rows[k]
	}
	var parts []string
	for k := 0; k < len(stored); k++ {
		if !stored[k] {
			continue
		}
		j := k
		for j+1 < len(stored) && stored[j+1] && num(j+1) == num(j)+1 {
			j++
		}
		if j == k {
			parts = append(parts, strconv.Itoa(num(k)))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", num(k), num(j)))
		}
		k = j
	}
	return strings.Join(parts, ", ")
}

// instances are the records to submit: one per row of --input, or the one
// given by --score-value and --label-value.
func (o *partyOptions) instances(cmd *cobra.Command) ([]party.Instance, error) {
	changed := func(name string) bool { return flagChanged(cmd, name+"-value") }
	switch {
	case o.csv != "" && (changed("score") || changed("label")):
		return nil, fmt.Errorf("give either --input or --score-value/--label-value, not both")
	case o.csv != "":
		return o.csvInstances(cmd)
	case changed("score") && changed("label"):
		inst := o.inst
		inst.HasProbability = changed("probability")
		return []party.Instance{inst}, nil
	default:
		return nil, fmt.Errorf("give --score-value and --label-value, or --input")
	}
}

// validateRows is client.ValidateRows naming the file's data row when
// --missing skip left rows out.
func (o *partyOptions) validateRows(m *manifest.Manifest, all []party.Instance) error {
	if o.dataRows == nil {
		return client.ValidateRows(m, all)
	}
	g, err := m.NewGrid()
	if err != nil {
		return fmt.Errorf("manifest grid: %w", err)
	}
	for k, x := range all {
		if _, err := party.New(x, g); err != nil {
			return fmt.Errorf("data row %d: %w", o.dataRows[k], err)
		}
	}
	return nil
}

// csvInstances reads one record per row of --input; with --missing skip
// a row missing the score, the label or the probability is left out
// whole (so the probability stays on its row) and counted on stderr.
func (o *partyOptions) csvInstances(cmd *cobra.Command) ([]party.Instance, error) {
	if o.missing != "error" && o.missing != "skip" {
		return nil, fmt.Errorf("--missing %q: want error or skip", o.missing)
	}
	rows, err := dataset.ReadScoredRows(o.csv, o.scoreCol, o.labelCol, o.positive, o.probCol, o.missing == "skip")
	if err != nil {
		return nil, err
	}
	all := make([]party.Instance, len(rows.Scores))
	for k := range all {
		all[k] = party.Instance{Score: rows.Scores[k], Label: rows.Labels[k]}
		if rows.Extra != nil {
			all[k].Probability, all[k].HasProbability = rows.Extra[k], true
		}
	}
	o.dataRows = nil
	if rows.Skipped > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "fedecdf: --missing skip left out %d row(s) missing a value; %d row(s) are submitted\n", rows.Skipped, len(all))
		o.dataRows = make([]int, len(all))
		for k, line := range rows.Lines {
			o.dataRows[k] = line - 1 // the header is line 1
		}
	}
	return all, nil
}
