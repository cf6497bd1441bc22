package main

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	fplot "github.com/fedecdf/fedecdf/internal/plot"
)

// summaryRows is the number of thresholds writeECDFSummary shows.
const summaryRows = 10

// writeECDFSummary writes the readable summary of "fedecdf ecdf": the
// privacy guarantee, the noise level, F̂ at about ten evenly spaced
// thresholds, and the quantiles in increasing order of probability.
func writeECDFSummary(w io.Writer, e *analysis.ECDF) error {
	var b strings.Builder
	n := len(e.Thresholds)
	fmt.Fprintf(&b, "private ECDF, %s", e.Normaliser)
	fmt.Fprintf(&b, "\nprivacy: ε = %.6g, δ = %.6g, %s neighbours, mechanism %s\n", e.Epsilon, e.Delta, e.Neighbours, e.Mechanism)
	fmt.Fprintf(&b, "guarantee: %s\n", e.Guarantee)
	fmt.Fprintf(&b, "grid: %d %s bins over [%g, %g]\n", n, e.Scale, e.Min, e.Max)
	fmt.Fprintf(&b, "noise: expected std dev of F̂ per threshold %.3g (%.3g instances)\n", e.StdDev, e.StdDev*float64(e.N))
	fmt.Fprintf(&b, "smoothing: %s\n\n", e.Smoothing)
	if e.Band95 != nil {
		fmt.Fprintf(&b, "band: simultaneous 95 %% band F̂ ± %.3g s.d. (Monte Carlo over the noise law, %d draws), clipped to [0, 1]\n\n", e.Band95.Critical, e.Band95.Draws)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "threshold\tprivate\tsmoothed\t95% band\t")
	for _, i := range summaryIndices(n, summaryRows) {
		fmt.Fprintf(tw, "%.6g\t%.4f\t%.4f\t%s\t\n", e.Thresholds[i-1], e.Raw[i-1], e.Smoothed[i-1], bandText(e, i-1))
	}
	tw.Flush()
	if len(e.Quantiles) > 0 {
		b.WriteString("\nquantiles (of the smoothed curve, to one bin; 95 % intervals from the band):\n")
		keys := slices.SortedFunc(maps.Keys(e.Quantiles), func(a, b string) int {
			pa, _ := strconv.ParseFloat(a, 64)
			pb, _ := strconv.ParseFloat(b, 64)
			return cmp.Compare(pa, pb)
		})
		for _, key := range keys {
			fmt.Fprintf(&b, "  p = %-6s %.6g%s\n", key, e.Quantiles[key], quantileCIText(e, key))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// bandText is "[lower, upper]" of the 95 % band at index j, or "—".
func bandText(e *analysis.ECDF, j int) string {
	if e.Band95 == nil {
		return "—"
	}
	return fmt.Sprintf("[%.4f, %.4f]", e.Band95.Lower[j], e.Band95.Upper[j])
}

// quantileCIText is "  95% CI [lo, hi]" for quantile key, or "".
func quantileCIText(e *analysis.ECDF, key string) string {
	iv, ok := e.QuantilesCI95[key]
	if !ok {
		return ""
	}
	return fmt.Sprintf("  95%% CI [%.6g, %.6g]", iv[0], iv[1])
}

// aucText is the AUC with its two 95 % intervals when they are known.
func aucText(r *analysis.ROC) string {
	unbinned := fmt.Sprintf("; of the curve interpolated between thresholds (estimate of the unbinned AUC) %.4f", r.Interpolated.AUC)
	if r.AUCCI95 == nil {
		return fmt.Sprintf("%.4f%s", r.AUC, unbinned)
	}
	return fmt.Sprintf("%.4f, 95%% CI [%.4f, %.4f] for this data set's binned AUC given the DP noise, [%.4f, %.4f] for the population AUC (+ sampling)%s",
		r.AUC, r.AUCCI95[0], r.AUCCI95[1], r.AUCCI95Population[0], r.AUCCI95Population[1], unbinned)
}

// apText is the average precision with its 95 % interval when it is
// known.
func apText(r *analysis.ROC) string {
	if r.AveragePrecisionCI95 == nil {
		return fmt.Sprintf("%.4f", r.AveragePrecision)
	}
	return fmt.Sprintf("%.4f, 95%% CI [%.4f, %.4f] for this data set's binned average precision given the DP noise", r.AveragePrecision, r.AveragePrecisionCI95[0], r.AveragePrecisionCI95[1])
}

// summaryIndices returns up to k bin indices in [1, n], evenly spaced and
// ending at n.
func summaryIndices(n, k int) []int {
	var idx []int
	for j := 1; j <= k; j++ {
		i := (j*n + k - 1) / k
		if len(idx) == 0 || idx[len(idx)-1] != i {
			idx = append(idx, i)
		}
	}
	return idx
}

// plotCurves writes a PNG (or, by the file's extension, SVG/PDF) plot of
// the raw private ECDF and the smoothed curve, over its 95 % band.
func plotCurves(file string, e *analysis.ECDF) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("private ECDF (ε = %.6g, %s, %s)", e.Epsilon, e.Mechanism, e.Short())
	p.X.Label.Text = "threshold"
	p.Y.Label.Text = "F"
	if e.Scale == ecdf.Log.String() {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	raw, err := plotter.NewLine(xys(e.Thresholds, e.Raw))
	if err != nil {
		return err
	}
	raw.Color = color.RGBA{R: 220, G: 50, B: 32, A: 255}
	raw.Width = vg.Points(0.75)
	smoothed, err := plotter.NewLine(xys(e.Thresholds, e.Smoothed))
	if err != nil {
		return err
	}
	smoothed.Color = color.RGBA{R: 0, G: 90, B: 181, A: 255}
	smoothed.Width = vg.Points(1.5)
	p.Add(plotter.NewGrid())
	if b := e.Band95; b != nil {
		band, err := fplot.NewBandPolygon(fplot.Band{X: e.Thresholds, Lower: b.Lower, Upper: b.Upper})
		if err != nil {
			return err
		}
		p.Add(band)
		p.Legend.Add("simultaneous 95 % band", band)
	}
	p.Add(raw, smoothed)
	p.Legend.Add("private ECDF (raw)", raw)
	p.Legend.Add("smoothed ("+e.Smoothing+")", smoothed)
	p.Legend.Top, p.Legend.Left = false, false // bottom right: an ECDF rises to the top
	if err := p.Save(8*vg.Inch, 5*vg.Inch, file); err != nil {
		return fmt.Errorf("writing plot %s: %w", file, err)
	}
	return nil
}

func xys(x, y []float64) plotter.XYs {
	pts := make(plotter.XYs, len(x))
	for i := range x {
		pts[i].X, pts[i].Y = x[i], y[i]
	}
	return pts
}
