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
)

func init() {
	var manifestPath, keyPath, outDir, format, logLevel, method, releaseID string
	cmd := &cobra.Command{
		Use:   "query --manifest FILE --key FILE [--release ID] ecdf|quantile P|roc|pr|hosmer",
		Short: "Ask the servers for a new release (charging the manifest's ε), or re-read one by --release for free, and print the private result",
		Long: `Without --release, the servers create a new release of the count component,
each charging the manifest's ε (δ) to its budget ledger, and answer all N
prefixes. With --release ID (printed by every query), they answer the
same release again with its original noise (kept in their stores across
restarts): no budget is spent and the curve is the one first read.
The curve is smoothed (--smooth, dp-ecdf Eq. 3) and quantiles are read
from the smoothed curve by Algorithm 1; both are post-processing.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format %q: want text or json", format)
			}
			probs, err := queryProbabilities(args)
			if err != nil {
				return err
			}
			logger, err := newLogger(logLevel)
			if err != nil {
				return err
			}
			m, err := deploy.ReadManifest(manifestPath)
			if err != nil {
				return err
			}
			id, err := deploy.ReadIdentity(keyPath)
			if err != nil {
				return err
			}
			a, err := deploy.NewAnalyst(m, id, p2p.Config{Logger: logger})
			if err != nil {
				return err
			}
			defer a.Close()
			if args[0] == "roc" || args[0] == "pr" {
				return queryROC(cmd, a, args[0], releaseID, method, format, outDir)
			}
			e, err := readECDF(cmd.Context(), a, releaseID)
			if err != nil {
				return err
			}
			if err := e.Smooth(method, probs); err != nil {
				return fmt.Errorf("--smooth: %w", err)
			}
			if outDir != "" {
				if err := writeJSONFile(filepath.Join(outDir, "ecdf.json"), e); err != nil {
					return err
				}
			}
			if format == "json" {
				return writeJSON(cmd.OutOrStdout(), e)
			}
			return writeECDFText(cmd.OutOrStdout(), e)
		},
	}
	f := cmd.Flags()
	f.StringVar(&manifestPath, "manifest", "manifest.json", "deployment manifest")
	f.StringVar(&keyPath, "key", "", "the analyst's key file (keygen)")
	f.StringVar(&outDir, "out", "", "directory to write the result as JSON into (ecdf.json, roc.json or pr.json)")
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.StringVar(&method, "smooth", "l2", "smoothing of the private curve: "+strings.Join(smooth.Methods, ", "))
	f.StringVar(&releaseID, "release", "", "re-read this existing release (its ID, as printed) instead of creating one: no budget spent")
	rootCmd.AddCommand(cmd)
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
		return nil, fmt.Errorf("hosmer: not available over the network yet (run it in fedecdf simulate): the servers' query protocol does not yet carry the probability-quantile grouping step")
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
func queryROC(cmd *cobra.Command, a *deploy.Analyst, stat, releaseID, method, format, outDir string) error {
	if releaseID != "" {
		return fmt.Errorf("--release: re-reading is available for ecdf and quantile only")
	}
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
