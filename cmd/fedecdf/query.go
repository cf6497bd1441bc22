package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	ma "github.com/multiformats/go-multiaddr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/plot"
)

// queryFlags are the flags of fedecdf query.
type queryFlags struct {
	analystFlags
	outDir, method, release, plan    string
	order                            string
	groups, bootstrap, intervalDraws int
}

// analystFlags are the flags of the commands run under an analyst's key
// (query, status).
type analystFlags struct {
	manifest, key, format, logLevel string
	// leaderProcess is the leader process asked first (a standby's
	// --query-listen address).
	leaderProcess string
}

// add defines the flags on f.
func (a *analystFlags) add(f *pflag.FlagSet) {
	f.StringVar(&a.manifest, "manifest", "manifest.json", "deployment manifest")
	f.StringVar(&a.key, "key", "", "your key file (keygen), whose peer ID the manifest lists (query: as an analyst; status: as an analyst or operator)")
	f.StringVar(&a.format, "format", "text", "output format: text or json")
	f.StringVar(&a.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.StringVar(&a.leaderProcess, "leader-process", "", "multiaddr of the leader process to ask first, a standby's --query-listen address (query: what it refuses goes to the coordinator; status: it answers from the database) (default: the manifest's leader addresses)")
}

// checkFormat refuses a --format other than text or json.
func (a *analystFlags) checkFormat() error {
	if a.format != "text" && a.format != "json" {
		return fmt.Errorf("--format %q: want text or json", a.format)
	}
	return nil
}

// queryLong is the Long help of the query command.
const queryLong = `Without --release, the servers create a new release, each charging its
ε (δ) to its budget ledger, and answer its prefixes:

  ecdf, quantile P  the count component at the manifest's ε; the curve is
                    smoothed (--smooth, dp-ecdf Eq. 3) and quantiles are
                    read from the smoothed curve by Algorithm 1.
  roc, pr           the label and 1−label components as one privacy unit
                    at the manifest's ε: the ROC curve and its PR curve.
                    A manifest mechanism auto becomes partitioned where
                    the policy allows it and it has less noise at the
                    grid's end bins (grids of about 32–192 bins).
  hosmer            the Hosmer–Lemeshow calibration test (dp-ecdf Eq. 5,
                    Algorithm 2) at the manifest's ε in total, under
                    replace-one neighbours: --plan grid (default; one
                    release of label and 1−label, exactly a roc query's,
                    with each bin's centre as its records' probability —
                    the score must be the predicted probability on a grid
                    within [0, 1]), joint (label, 1−label and probability
                    at ε/2) or paper (the paper's split). Prints the
                    --groups quantile groups (bins, size, observed and
                    expected positives), H and its noise-aware p-value
                    (a parametric bootstrap of H under calibration over
                    the public noise law, --bootstrap draws), next to
                    the naive χ²(G−2) one, which ignores the noise and
                    is too small. The groups are quantiles of the
                    grid's score bins: the score must be monotone in the
                    predicted probability; joint and paper also need every
                    party's probability (fedecdf party --probability).
                    Noise can leave H undefined (a released group too
                    small): it says so, and the ε is spent all the same.

With --release ID (printed by every query), the servers answer the same
release again with its original noise (kept in their stores across
restarts): no budget is spent and the result is the one first read.
"roc --release ID" re-reads a ROC release, and "hosmer --release ID" runs
the grid plan's test on it: the Hosmer–Lemeshow test comes free with the
ROC curve. Smoothing and quantiles are post-processing. --out DIR writes the result
as JSON (ecdf.json, roc.json, pr.json or hosmer.json) and a PNG: ecdf.png
(the private and smoothed curves over their simultaneous 95 % band),
roc.png (likewise), pr.png and, for hosmer, calibration.png
(observed against expected positive rate per group).`

// newQueryCommand builds the "query" command.
func newQueryCommand() *cobra.Command {
	var q queryFlags
	cmd := &cobra.Command{
		Use:   "query --manifest FILE --key FILE [--release ID] ecdf|quantile P|roc|pr|hosmer",
		Short: "Ask the servers for a new release (charging the manifest's ε), or re-read one by --release for free, and print the private result",
		Long:  queryLong,
		Example: `  # A new ECDF release (charges the manifest's ε), then its median, re-read
  # for free by the ID the first query printed
  fedecdf query --manifest manifest.json --key analyst.key ecdf
  fedecdf query --manifest manifest.json --key analyst.key --release ID quantile 0.5

  # A new ROC release written as JSON into results/, then the
  # Hosmer–Lemeshow test from the same release at no further ε
  fedecdf query --manifest manifest.json --key analyst.key --out results roc
  fedecdf query --manifest manifest.json --key analyst.key --release ID hosmer`,
		Args: cobra.RangeArgs(1, 2),
		RunE: q.run,
	}
	f := cmd.Flags()
	q.add(f)
	f.StringVar(&q.outDir, "out", "", "directory to write the result into (ecdf.json and ecdf.png, roc.json and roc.png, pr.json and pr.png, or hosmer.json and calibration.png)")
	f.StringVar(&q.method, "smooth", "l2", "smoothing of the private curve (for hosmer: of the ECDF the groups are cut from): "+strings.Join(smooth.Methods, ", "))
	f.StringVar(&q.release, "release", "", "re-read this existing release (its ID, as printed) instead of creating one: no budget spent (ecdf and quantile: an ecdf release; roc, pr and hosmer: a roc release)")
	f.StringVar(&q.plan, "plan", analysis.HosmerPlans[0], "hosmer: allocation of ε over the releases: "+strings.Join(analysis.HosmerPlans, " or "))
	f.IntVar(&q.groups, "groups", analysis.HosmerGroups, "hosmer: number Q of quantile groups (at least 3)")
	f.IntVar(&q.bootstrap, "bootstrap", hosmer.DefaultNullDraws, "hosmer: number B of simulated null data sets for the noise-aware p-value (Monte-Carlo s.e. √(p(1−p)/B); negative: none)")
	addIntervalDrawsFlag(cmd, &q.intervalDraws)
	addOrderFlag(cmd, &q.order)
	return cmd
}

func (q *queryFlags) run(cmd *cobra.Command, args []string) error {
	if err := q.checkFormat(); err != nil {
		return err
	}
	probs, err := queryProbabilities(args)
	if err != nil {
		return err
	}
	if q.outDir != "" { // before any release: a bad --out must not cost budget
		if err := os.MkdirAll(q.outDir, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	var release payload.ReleaseID
	if q.release != "" {
		if release, err = analyst.ParseReleaseID(q.release); err != nil {
			return fmt.Errorf("--release: %w", err)
		}
	}
	a, err := q.analyst(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	a.SetIntervalDraws(q.intervalDraws)
	switch args[0] {
	case "roc", "pr":
		return q.roc(cmd, a, args[0], release)
	case "hosmer":
		return q.hosmer(cmd, a, release)
	}
	e, err := readECDF(cmd.Context(), a, q.release != "", release)
	if err != nil {
		return err
	}
	if err := e.Smooth(q.method, probs); err != nil {
		return fmt.Errorf("--smooth: %w", err)
	}
	if q.outDir != "" {
		if err := writeJSONFile(filepath.Join(q.outDir, "ecdf.json"), e); err != nil {
			return err
		}
		if err := plotCurves(filepath.Join(q.outDir, "ecdf.png"), e.ECDF); err != nil {
			return err
		}
	}
	if q.format == "json" {
		return writeJSON(cmd.OutOrStdout(), e)
	}
	return writeECDFText(cmd.OutOrStdout(), e)
}

// analyst starts the analyst's client of the manifest's deployment
// under the key file of --key, trying the leader process of
// --leader-process first when it is given.
func (a *analystFlags) analyst(cmd *cobra.Command) (*analyst.Analyst, error) {
	m, id, tc, err := a.load(cmd, "analyst")
	if err != nil {
		return nil, err
	}
	first, err := a.first()
	if err != nil {
		return nil, err
	}
	return analyst.NewAnalystAt(m, id, tc, first)
}

// first is the leader process of --leader-process, none without it.
func (a *analystFlags) first() ([]ma.Multiaddr, error) {
	if a.leaderProcess == "" {
		return nil, nil
	}
	first, err := ma.NewMultiaddr(a.leaderProcess)
	if err != nil {
		return nil, fmt.Errorf("--leader-process %q: %w", a.leaderProcess, err)
	}
	return []ma.Multiaddr{first}, nil
}

// load reads the manifest and the key file of --key, whose owner is
// (named for the error) the manifest lists, and returns them with the
// transport settings logging at --log-level.
func (a *analystFlags) load(cmd *cobra.Command, owner string) (*manifest.Manifest, *manifest.Identity, p2p.Config, error) {
	logger, err := newLogger(cmd.ErrOrStderr(), a.logLevel)
	if err != nil {
		return nil, nil, p2p.Config{}, err
	}
	if a.key == "" {
		return nil, nil, p2p.Config{}, fmt.Errorf("--key is required: the %s's key file (fedecdf keygen --output analyst.key), whose peer ID the manifest lists", owner)
	}
	m, err := manifest.ReadManifest(a.manifest)
	if err != nil {
		return nil, nil, p2p.Config{}, err
	}
	id, err := manifest.ReadIdentity(a.key)
	if err != nil {
		return nil, nil, p2p.Config{}, fmt.Errorf("--key: %w", err)
	}
	return m, id, p2p.Config{Logger: logger}, nil
}

// readECDF creates a new release, or re-reads release id when reread.
func readECDF(ctx context.Context, a *analyst.Analyst, reread bool, id payload.ReleaseID) (*analyst.ECDF, error) {
	if !reread {
		return a.ECDF(ctx)
	}
	return a.ReadRelease(ctx, id)
}

// queryProbabilities returns the quantile probabilities the statistic
// asks for, or an error for a statistic not available over the network.
func queryProbabilities(args []string) ([]float64, error) {
	switch stat := args[0]; stat {
	case "ecdf":
		if len(args) != 1 {
			return nil, fmt.Errorf("ecdf takes no argument")
		}
		return []float64{0.1, 0.25, 0.5, 0.75, 0.9}, nil
	case "quantile":
		if len(args) != 2 {
			return nil, fmt.Errorf("quantile needs a probability P")
		}
		p, err := strconv.ParseFloat(args[1], 64)
		if err != nil || !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("quantile probability %q is not a number in [0, 1]", args[1])
		}
		return []float64{p}, nil
	case "roc", "pr":
		if len(args) != 1 {
			return nil, fmt.Errorf("%s takes no argument", stat)
		}
		return nil, nil
	case "hosmer":
		if len(args) != 1 {
			return nil, fmt.Errorf("hosmer takes no argument (--groups sets the number of groups)")
		}
		return nil, nil
	default:
		return nil, fmt.Errorf("unknown statistic %q (want ecdf, quantile, roc, pr or hosmer)", stat)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeJSONFile(path string, v any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeJSON(f, v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeECDFText prints the release ID (for --release), the guarantee,
// the quantiles of the smoothed curve, and F̂ and its smoothing at up to
// 20 evenly spaced thresholds.
func writeECDFText(w io.Writer, e *analyst.ECDF) error {
	spent := "new release: ε, δ charged at both servers"
	if !e.Charged {
		spent = "existing release re-read: no budget spent"
	}
	fmt.Fprintf(w, "release %s (%s; re-read it with --release %s)\n", e.Release, spent, e.Release)
	fmt.Fprintf(w, "dataset %q, %s\n%s\nnoise s.d. of F̂ ≈ %.4f (both servers)\n\n", e.Dataset, e.Normaliser, e.Guarantee, e.StdDev)
	for _, p := range sortedKeys(e.Quantiles) {
		fmt.Fprintf(w, "quantile %s\t%.6g%s\t(of the curve smoothed by %s)\n", p, e.Quantiles[p], quantileCIText(e.ECDF, p), e.Smoothing)
	}
	if e.Band95 != nil {
		fmt.Fprintf(w, "\n95%% band: simultaneous, F̂ ± %.3g s.d. (Monte Carlo over the noise law, %d draws), clipped to [0, 1]\n", e.Band95.Critical, e.Band95.Draws)
	}
	fmt.Fprintf(w, "\n threshold\tprivate F̂\tsmoothed (%s)\t95%% band\n", e.Smoothing)
	n := len(e.Thresholds)
	step := max(1, n/20)
	for i := step - 1; i < n; i += step {
		fmt.Fprintf(w, "%10.4g\t%.4f\t%.4f\t%s\n", e.Thresholds[i], e.Raw[i], e.Smoothed[i], bandText(e.ECDF, i))
	}
	_, err := fmt.Fprintln(w)
	return err
}

func sortedKeys(m map[string]float64) []string {
	return slices.Sorted(maps.Keys(m))
}

// roc creates a release of the positives' and negatives' prefix counts,
// or re-reads release id when set, and prints the private ROC curve (or
// its PR curve).
func (q *queryFlags) roc(cmd *cobra.Command, a *analyst.Analyst, stat string, id payload.ReleaseID) error {
	var r *analyst.ROC
	var err error
	if q.release != "" {
		r, err = a.ROCRelease(cmd.Context(), id, q.method)
	} else {
		r, err = a.ROC(cmd.Context(), q.method)
	}
	if err != nil {
		return err
	}
	out := *r // the JSON, in --order
	if out.ROC, err = r.ROC.InOrder(q.order); err != nil {
		return err
	}
	if q.outDir != "" {
		if err := writeJSONFile(filepath.Join(q.outDir, stat+".json"), &out); err != nil {
			return err
		}
		chart := rocChart(r)
		if stat == "pr" {
			chart = prChart(r)
		}
		if err := chart.Save(filepath.Join(q.outDir, stat+".png")); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	if q.format == "json" {
		return writeJSON(w, &out)
	}
	fmt.Fprintf(w, "release %s (%s; re-read it with --release %s, and \"hosmer --release %s\" gives the Hosmer–Lemeshow test from it for free)\ndataset %q, %s\n%s\n\n",
		r.Release, spentNote(r.Charged, "label and 1−label components"), r.Release, r.Release, r.Dataset, r.Normaliser, r.Guarantee)
	xs, ys, xName, yName := r.FPR, r.TPR, "FPR", "TPR"
	if stat == "pr" {
		xs, ys, xName, yName = r.Recall, r.Precision, "recall", "precision"
		fmt.Fprintf(w, "average precision %s (curves smoothed by %s)\n\n", apText(r.ROC), r.Smoothing)
	} else {
		fmt.Fprintf(w, "AUC %s (curves smoothed by %s)\n", aucText(r.ROC), r.Smoothing)
		for _, n := range r.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		for _, x := range analysis.BandFPRs {
			if fpr, lo, hi, ok := r.Band95.At(x); ok {
				fmt.Fprintf(w, "TPR at FPR %.2f: %.4f, simultaneous 95 %% band [%.4f, %.4f] given the DP noise\n", fpr, r.TPRAt(fpr), lo, hi)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%10s\t%s\n", xName, yName)
	step := max(1, len(xs)/20)
	for i := 0; i < len(xs); i += step {
		fmt.Fprintf(w, "%10.4f\t%.4f\n", xs[i], ys[i])
	}
	_, err = fmt.Fprintln(w)
	return err
}

// rocChart draws the raw and smoothed private ROC curves of r over their
// simultaneous 95 % band.
func rocChart(r *analyst.ROC) *plot.Chart {
	title := fmt.Sprintf("ROC, dataset %q, n = %d, %s, ε = %.6g", r.Dataset, r.N, r.Mechanism, r.Epsilon)
	return plot.ROCChart(title, r.Band95,
		plot.Series{Name: fmt.Sprintf("private (AUC %.3f)", r.Raw.AUC), X: r.Raw.FPR, Y: r.Raw.TPR},
		plot.Series{Name: fmt.Sprintf("smoothed by %s (AUC %.3f)", r.Smoothing, r.AUC), X: r.FPR, Y: r.TPR, Style: plot.Dashed})
}

// prChart is pr.png: the private PR curve and the smoothed one.
func prChart(r *analyst.ROC) *plot.Chart {
	return &plot.Chart{
		Title:  fmt.Sprintf("PR, dataset %q, n = %d, %s, ε = %.6g", r.Dataset, r.N, r.Mechanism, r.Epsilon),
		XLabel: "recall", YLabel: "precision", Legend: plot.BottomRight,
		XMin: 0, XMax: 1, YMin: 0, YMax: 1,
		Series: []plot.Series{
			{Name: fmt.Sprintf("private (AP %.3f)", r.Raw.AveragePrecision), X: r.Raw.Recall, Y: r.Raw.Precision},
			{Name: fmt.Sprintf("smoothed by %s (AP %.3f)", r.Smoothing, r.AveragePrecision), X: r.Recall, Y: r.Precision, Style: plot.Dashed},
		},
	}
}

// hosmer runs the Hosmer–Lemeshow test — on new releases of --plan, or on
// the ROC release id when --release is set — and prints it, writing
// hosmer.json and calibration.png into --out.
func (q *queryFlags) hosmer(cmd *cobra.Command, a *analyst.Analyst, id payload.ReleaseID) error {
	var h *analyst.Hosmer
	var err error
	if q.release != "" {
		if cmd.Flags().Changed("plan") && q.plan != "grid" {
			return fmt.Errorf("--release runs the grid plan on an existing ROC release; --plan %s needs releases of its own (drop --release)", q.plan)
		}
		h, err = a.HosmerRelease(cmd.Context(), id, q.method, q.groups, q.bootstrap)
	} else {
		h, err = a.Hosmer(cmd.Context(), q.plan, q.method, q.groups, q.bootstrap)
	}
	if err != nil {
		return err
	}
	if q.outDir != "" {
		if err := writeHosmerFiles(q.outDir, h); err != nil {
			return err
		}
	}
	if q.format == "json" {
		return writeJSON(cmd.OutOrStdout(), h)
	}
	return writeHosmerText(cmd.OutOrStdout(), h)
}

// writeHosmerFiles writes hosmer.json and calibration.png into dir
// (created if missing); with H undefined there is no chart to draw.
func writeHosmerFiles(dir string, h *analyst.Hosmer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := writeJSONFile(filepath.Join(dir, "hosmer.json"), h); err != nil {
		return err
	}
	if h.Statistic == nil {
		return nil
	}
	title := fmt.Sprintf("Calibration, %d groups, n = %d, %s plan, ε = %.6g", len(h.Groups), h.N, h.Plan, h.Epsilon)
	c := plot.CalibrationChart(title+", "+analysis.ShortPValues(&h.Hosmer), plot.CalibrationSeriesBars(fmt.Sprintf("private (H %.2f; %s)", *h.Statistic, analysis.CalibrationBarsLegend), h.Groups, h.RateHalfWidths()))
	return c.Save(filepath.Join(dir, "calibration.png"))
}

// writeHosmerText prints the releases, the guarantee, the groups table
// and H with its p-value, or why H is undefined.
func writeHosmerText(w io.Writer, h *analyst.Hosmer) error {
	fmt.Fprintf(w, "Hosmer–Lemeshow test, %s plan: release(s) %s (%s)\n", h.Plan, strings.Join(h.Releases, ", "), spentNote(h.Charged, "plan"))
	fmt.Fprintf(w, "dataset %q, %s, %s mechanism, ECDF smoothed by %s\n%s\n\n", h.Dataset, h.Normaliser, h.Mechanism, h.Smoothing, h.Guarantee)
	if h.Error != "" {
		_, err := fmt.Fprintf(w, "H undefined: %s\n(the noise left a released group without positive expected counts; %d groups asked for, n = %d: more reports or a larger ε give larger groups)\n", h.Error, h.GroupsAsked, h.N)
		return err
	}
	if err := h.WriteGroups(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nH = %.4g with %d groups: %s\n", *h.Statistic, len(h.Groups), analysis.DescribePValues(&h.Hosmer))
	return err
}

// spentNote says whether a result spent budget: a new release of what,
// or a re-read of an existing one.
func spentNote(charged bool, what string) string {
	if charged {
		return "new release of the " + what + ": ε charged at both servers"
	}
	return "existing release re-read: no budget spent"
}
