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

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/deploy"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/plot"
)

func init() { rootCmd.AddCommand(newQueryCommand()) }

// queryFlags are the flags of fedecdf query.
type queryFlags struct {
	manifest, key, outDir, format, logLevel, method, release, plan string
	groups                                                         int
}

func newQueryCommand() *cobra.Command {
	var q queryFlags
	cmd := &cobra.Command{
		Use:   "query --manifest FILE --key FILE [--release ID] ecdf|quantile P|roc|pr|hosmer",
		Short: "Ask the servers for a new release (charging the manifest's ε), or re-read one by --release for free, and print the private result",
		Long: `Without --release, the servers create a new release, each charging its
ε (δ) to its budget ledger, and answer its prefixes:

  ecdf, quantile P  the count component at the manifest's ε; the curve is
                    smoothed (--smooth, dp-ecdf Eq. 3) and quantiles are
                    read from the smoothed curve by Algorithm 1.
  roc, pr           the label and 1−label components as one privacy unit
                    at the manifest's ε: the ROC curve and its PR curve.
  hosmer            the Hosmer–Lemeshow calibration test (dp-ecdf Eq. 5,
                    Algorithm 2) at the manifest's ε in total, under
                    replace-one neighbours: --plan joint (default; one
                    release of label, 1−label and probability at ε/2) or
                    paper (the paper's split; needed for δ > 0). Prints
                    the --groups quantile groups (bins, size, observed and
                    expected positives), H and its p-value (χ² with G−2
                    degrees of freedom). The groups are quantiles of the
                    grid's score bins: the score must be monotone in the
                    predicted probability, and every party must have sent
                    its probability (fedecdf party --probability). Noise
                    can leave H undefined (a released group too small):
                    it says so, and the ε is spent all the same.

With --release ID (printed by every ecdf query), the servers answer the
same release again with its original noise (kept in their stores across
restarts): no budget is spent and the curve is the one first read.
Smoothing and quantiles are post-processing. --out DIR writes the result
as JSON (ecdf.json, roc.json, pr.json or hosmer.json) and, for hosmer,
calibration.png (observed against expected positive rate per group).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: q.run,
	}
	f := cmd.Flags()
	f.StringVar(&q.manifest, "manifest", "manifest.json", "deployment manifest")
	f.StringVar(&q.key, "key", "", "the analyst's key file (keygen)")
	f.StringVar(&q.outDir, "out", "", "directory to write the result into (ecdf.json, roc.json, pr.json, or hosmer.json and calibration.png)")
	f.StringVar(&q.format, "format", "text", "output format: text or json")
	f.StringVar(&q.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.StringVar(&q.method, "smooth", "l2", "smoothing of the private curve (for hosmer: of the ECDF the groups are cut from): "+strings.Join(smooth.Methods, ", "))
	f.StringVar(&q.release, "release", "", "re-read this existing release (its ID, as printed) instead of creating one: no budget spent (ecdf and quantile)")
	f.StringVar(&q.plan, "plan", deploy.HosmerPlans[0], "hosmer: allocation of ε over the releases: "+strings.Join(deploy.HosmerPlans, " or "))
	f.IntVar(&q.groups, "groups", 10, "hosmer: number Q of quantile groups (at least 3)")
	return cmd
}

func (q *queryFlags) run(cmd *cobra.Command, args []string) error {
	if q.format != "text" && q.format != "json" {
		return fmt.Errorf("--format %q: want text or json", q.format)
	}
	probs, err := queryProbabilities(args)
	if err != nil {
		return err
	}
	if q.release != "" && args[0] != "ecdf" && args[0] != "quantile" {
		return fmt.Errorf("--release: re-reading is available for ecdf and quantile only")
	}
	logger, err := newLogger(q.logLevel)
	if err != nil {
		return err
	}
	m, err := deploy.ReadManifest(q.manifest)
	if err != nil {
		return err
	}
	id, err := deploy.ReadIdentity(q.key)
	if err != nil {
		return err
	}
	a, err := deploy.NewAnalyst(m, id, p2p.Config{Logger: logger})
	if err != nil {
		return err
	}
	defer a.Close()
	switch args[0] {
	case "roc", "pr":
		return queryROC(cmd, a, args[0], q.method, q.format, q.outDir)
	case "hosmer":
		return q.hosmer(cmd, a)
	}
	e, err := readECDF(cmd.Context(), a, q.release)
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
	}
	if q.format == "json" {
		return writeJSON(cmd.OutOrStdout(), e)
	}
	return writeECDFText(cmd.OutOrStdout(), e)
}

// readECDF creates a new release, or re-reads release id when given.
func readECDF(ctx context.Context, a *deploy.Analyst, id string) (*deploy.ECDF, error) {
	if id == "" {
		return a.ECDF(ctx)
	}
	rel, err := deploy.ParseReleaseID(id)
	if err != nil {
		return nil, fmt.Errorf("--release: %w", err)
	}
	return a.ReadRelease(ctx, rel)
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
func writeECDFText(w io.Writer, e *deploy.ECDF) error {
	spent := "new release: ε, δ charged at both servers"
	if !e.Charged {
		spent = "existing release re-read: no budget spent"
	}
	fmt.Fprintf(w, "release %s (%s; re-read it with --release %s)\n", e.Release, spent, e.Release)
	fmt.Fprintf(w, "dataset %q, n = %d reports\n%s\nnoise s.d. of F̂ ≈ %.4f (both servers)\n\n", e.Dataset, e.N, e.Guarantee, e.StdDev)
	for _, p := range sortedKeys(e.Quantiles) {
		fmt.Fprintf(w, "quantile %s\t%.6g\t(of the curve smoothed by %s)\n", p, e.Quantiles[p], e.Smoothing)
	}
	fmt.Fprintf(w, "\n threshold\tprivate F̂\tsmoothed (%s)\n", e.Smoothing)
	n := len(e.Thresholds)
	step := max(1, n/20)
	for i := step - 1; i < n; i += step {
		fmt.Fprintf(w, "%10.4g\t%.4f\t%.4f\n", e.Thresholds[i], e.ECDF[i], e.Smoothed[i])
	}
	_, err := fmt.Fprintln(w)
	return err
}

func sortedKeys(m map[string]float64) []string {
	return slices.Sorted(maps.Keys(m))
}

// queryROC creates a release of the positives' and negatives' prefix
// counts and prints the private ROC curve (or its PR curve).
func queryROC(cmd *cobra.Command, a *deploy.Analyst, stat, method, format, outDir string) error {
	r, err := a.ROC(cmd.Context(), method)
	if err != nil {
		return err
	}
	if outDir != "" {
		if err := writeJSONFile(filepath.Join(outDir, stat+".json"), r); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	if format == "json" {
		return writeJSON(w, r)
	}
	fmt.Fprintf(w, "release %s (new release of the label and 1−label components)\ndataset %q, n = %d reports\n%s\n\n", r.Release, r.Dataset, r.N, r.Guarantee)
	xs, ys, xName, yName := r.FPR, r.TPR, "FPR", "TPR"
	if stat == "pr" {
		xs, ys, xName, yName = r.Recall, r.Precision, "recall", "precision"
		fmt.Fprintf(w, "average precision %.4f (curves smoothed by %s)\n\n", r.AveragePrecision, r.Smoothing)
	} else {
		fmt.Fprintf(w, "AUC %.4f (curves smoothed by %s)\n\n", r.AUC, r.Smoothing)
	}
	fmt.Fprintf(w, "%10s\t%s\n", xName, yName)
	step := max(1, len(xs)/20)
	for i := 0; i < len(xs); i += step {
		fmt.Fprintf(w, "%10.4f\t%.4f\n", xs[i], ys[i])
	}
	_, err = fmt.Fprintln(w)
	return err
}

// hosmer runs the Hosmer–Lemeshow test and prints it, writing hosmer.json
// and calibration.png into --out.
func (q *queryFlags) hosmer(cmd *cobra.Command, a *deploy.Analyst) error {
	h, err := a.Hosmer(cmd.Context(), q.plan, q.method, q.groups)
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
func writeHosmerFiles(dir string, h *deploy.Hosmer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := writeJSONFile(filepath.Join(dir, "hosmer.json"), h); err != nil {
		return err
	}
	if h.Statistic == nil {
		return nil
	}
	groups := make([]plot.CalibrationGroup, len(h.Groups))
	for k, g := range h.Groups {
		groups[k] = plot.CalibrationGroup{Size: g.Size, Observed: g.Observed, Expected: g.Expected}
	}
	title := fmt.Sprintf("Calibration, %d groups, n = %d, %s plan, ε = %g", len(h.Groups), h.N, h.Plan, h.Epsilon)
	c := plot.CalibrationChart(title, plot.CalibrationSeries(fmt.Sprintf("private (H %.2f)", *h.Statistic), groups))
	return c.Save(filepath.Join(dir, "calibration.png"))
}

// writeHosmerText prints the releases, the guarantee, the groups table
// and H with its p-value, or why H is undefined.
func writeHosmerText(w io.Writer, h *deploy.Hosmer) error {
	fmt.Fprintf(w, "Hosmer–Lemeshow test, %s plan: new release(s) %s (ε charged at both servers)\n", h.Plan, strings.Join(h.Releases, ", "))
	fmt.Fprintf(w, "dataset %q, n = %d reports, %s mechanism, ECDF smoothed by %s\n%s\n\n", h.Dataset, h.N, h.Mechanism, h.Smoothing, h.Guarantee)
	if h.Error != "" {
		_, err := fmt.Fprintf(w, "H undefined: %s\n(the noise left a released group without positive expected counts; %d groups asked for, n = %d: more reports or a larger ε give larger groups)\n", h.Error, h.GroupsAsked, h.N)
		return err
	}
	fmt.Fprintf(w, "%5s  %9s  %9s  %9s  %9s\n", "group", "bins", "size", "observed", "expected")
	for k, g := range h.Groups {
		fmt.Fprintf(w, "%5d  %9s  %9.1f  %9.1f  %9.1f\n", k+1, fmt.Sprintf("%d-%d", g.FirstBin, g.LastBin), g.Size, g.Observed, g.Expected)
	}
	pValue := "undefined (fewer than 3 groups)"
	if h.PValue != nil {
		pValue = strconv.FormatFloat(*h.PValue, 'g', 4, 64)
	}
	_, err := fmt.Fprintf(w, "\nH = %.4g with %d groups (χ² with %d degrees of freedom), p-value %s\n", *h.Statistic, len(h.Groups), len(h.Groups)-2, pValue)
	return err
}
