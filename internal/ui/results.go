package ui

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/plot"
)

// ErrFile is returned for a file that is not the JSON output of fedecdf
// simulate or query.
var ErrFile = errors.New("ui: not a fedecdf simulate --format json or query --format json file")

// Results are the statistics of one release, or of one file, as the
// results page shows them; a nil statistic is absent.
type Results struct {
	// Dataset and Release name the deployment's release ("" for a file).
	Dataset, Release string
	// Source names a file's origin ("" for a release).
	Source string
	ECDF   *analysis.ECDF
	ROC    *analysis.ROC
	Hosmer *analysis.Hosmer
	// HosmerError says why a ROC release has no Hosmer–Lemeshow test.
	HosmerError string
	// Created is when this ui server created the release ("" when it
	// did not; the servers record their own time, fedecdf status).
	Created string
	// The objects downloaded as JSON: the deploy types fedecdf query
	// prints, or a file's own objects.
	ecdfJSON, rocJSON, hosmerJSON any
}

// ReadFile reads the JSON output of fedecdf simulate --format json (its
// ecdf, roc and first hosmer allocation), or of fedecdf query --format
// json (ecdf, quantile, roc, pr or hosmer), named source.
func ReadFile(source string, data []byte) (*Results, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFile, source, err)
	}
	res := &Results{Source: source}
	var err error
	switch {
	case top["ecdf"] != nil && top["roc"] != nil: // simulate
		err = res.readSimulate(top)
	case top["fpr"] != nil && top["raw"] != nil: // before thresholds: a ROC has them too
		err = decode(data, &res.ROC, &res.rocJSON)
	case top["thresholds"] != nil:
		err = decode(data, &res.ECDF, &res.ecdfJSON)
	case top["plan"] != nil && top["groups"] != nil:
		err = decode(data, &res.Hosmer, &res.hosmerJSON)
	default:
		err = errors.New("no ECDF, ROC or Hosmer–Lemeshow keys (docs/json.md)")
	}
	if err == nil && res.ROC != nil && res.ROC.Order != "" {
		err = fmt.Errorf("its ROC and PR arrays are in %s order (written with --order): the ui reads fedecdf's own order, so write the file without --order", res.ROC.Order)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFile, source, err)
	}
	return res, nil
}

// readSimulate reads the ecdf, roc and first hosmer allocation of a
// simulate report.
func (res *Results) readSimulate(top map[string]json.RawMessage) error {
	if err := decode(top["ecdf"], &res.ECDF, &res.ecdfJSON); err != nil {
		return fmt.Errorf("ecdf: %w", err)
	}
	if err := decode(top["roc"], &res.ROC, &res.rocJSON); err != nil {
		return fmt.Errorf("roc: %w", err)
	}
	var h struct {
		Allocations []json.RawMessage `json:"allocations"`
		Undefined   string            `json:"undefined"`
	}
	if raw := top["hosmer"]; raw != nil {
		if err := json.Unmarshal(raw, &h); err != nil {
			return fmt.Errorf("hosmer: %w", err)
		}
	}
	if len(h.Allocations) == 0 {
		res.HosmerError = "the simulation ran no Hosmer–Lemeshow test: " + h.Undefined
		return nil
	}
	if err := decode(h.Allocations[0], &res.Hosmer, &res.hosmerJSON); err != nil {
		return fmt.Errorf("hosmer: %w", err)
	}
	return nil
}

// decode decodes raw into *v and keeps raw itself as the object to
// download.
func decode[T any](raw []byte, v **T, keep *any) error {
	*v = new(T)
	if err := json.Unmarshal(raw, *v); err != nil {
		return err
	}
	*keep = json.RawMessage(raw)
	return nil
}

// Figures are the names of the figures a results page can show.
var Figures = []string{"ecdf", "roc", "pr", "calibration"}

// has says whether res has figure name.
func (res *Results) has(name string) bool {
	switch name {
	case "ecdf":
		return res.ECDF != nil
	case "roc", "pr":
		return res.ROC != nil
	case "calibration":
		return res.Hosmer != nil
	}
	return false
}

// JSON writes the object of figure name as fedecdf query --format json
// prints it (docs/json.md): pr shares roc's object.
func (res *Results) JSON(w io.Writer, name string) error {
	v := map[string]any{"ecdf": res.ecdfJSON, "roc": res.rocJSON, "pr": res.rocJSON, "calibration": res.hosmerJSON}[name]
	if v == nil || !res.has(name) {
		return fmt.Errorf("ui: no %s in these results", name)
	}
	if raw, ok := v.(json.RawMessage); ok {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return err
		}
		b.WriteByte('\n')
		_, err := b.WriteTo(w)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Chart returns the chart of figure name.
func (res *Results) Chart(name string) (*plot.Chart, error) {
	if !res.has(name) {
		return nil, fmt.Errorf("ui: no %s in these results", name)
	}
	switch name {
	case "ecdf":
		return ecdfChart(res.ECDF), nil
	case "roc":
		return rocChart(res.ROC), nil
	case "pr":
		return prChart(res.ROC), nil
	}
	return calibrationChart(res.Hosmer), nil
}

// chartTitle is a chart's title: the figure and n, the release's ε, δ
// and relation, and on a line of its own its (possibly long) mechanism.
func chartTitle(figure string, p analysis.Privacy) string {
	return fmt.Sprintf("%s, n = %d, ε = %.6g, δ = %.6g, %s neighbours\nmechanism %s", figure, p.N, p.Epsilon, p.Delta, p.Neighbours, p.Mechanism)
}

func ecdfChart(e *analysis.ECDF) *plot.Chart {
	c := &plot.Chart{
		Title:  chartTitle("ECDF", e.Privacy),
		XLabel: "score threshold τ", YLabel: "F(τ)", Legend: plot.TopLeft, YMin: 0, YMax: 1,
		Series: []plot.Series{
			{Name: "private F̂", X: e.Thresholds, Y: e.Raw, Style: plot.Step},
			{Name: "smoothed by " + e.Smoothing, X: e.Thresholds, Y: e.Smoothed, Style: plot.Dashed},
		},
	}
	if b := e.Band95; b != nil {
		c.Bands = []plot.Band{{Name: "simultaneous 95 % band (DP noise)", X: e.Thresholds, Lower: b.Lower, Upper: b.Upper, Step: true}}
	}
	return c
}

func rocChart(r *analysis.ROC) *plot.Chart {
	return plot.ROCChart(chartTitle("ROC", r.Privacy), r.Band95,
		plot.Series{Name: fmt.Sprintf("private (AUC %.3f)", r.Raw.AUC), X: r.Raw.FPR, Y: r.Raw.TPR},
		plot.Series{Name: fmt.Sprintf("smoothed by %s (AUC %.3f)", r.Smoothing, r.AUC), X: r.FPR, Y: r.TPR, Style: plot.Dashed})
}

func prChart(r *analysis.ROC) *plot.Chart {
	return &plot.Chart{
		Title:  chartTitle("PR", r.Privacy),
		XLabel: "recall", YLabel: "precision", Legend: plot.TopRight, XMin: 0, XMax: 1, YMin: 0, YMax: 1,
		Series: []plot.Series{
			{Name: fmt.Sprintf("private (AP %.3f)", r.Raw.AveragePrecision), X: r.Raw.Recall, Y: r.Raw.Precision},
			{Name: fmt.Sprintf("smoothed by %s (AP %.3f)", r.Smoothing, r.AveragePrecision), X: r.Recall, Y: r.Precision, Style: plot.Dashed},
		},
	}
}

func calibrationChart(h *analysis.Hosmer) *plot.Chart {
	title := fmt.Sprintf("Calibration, %d groups, %s plan, ε = %.6g, δ = %.6g\n%s", len(h.Groups), h.Plan, h.Epsilon, h.Delta, analysis.ShortPValues(h))
	name := "private"
	if h.Statistic != nil {
		name = fmt.Sprintf("private (H %.2f; %s)", *h.Statistic, analysis.CalibrationBarsLegend)
	}
	return plot.CalibrationChart(title, plot.CalibrationSeriesBars(name, h.Groups, h.RateHalfWidths()))
}

// CSV writes the numbers of figure name as CSV, one row per table row of
// the page and every point of the curves: ecdf (threshold, count, F̂,
// smoothed, band), roc and pr (series, x, y: the smoothed and raw curves
// and the ROC band's edges), calibration (the groups).
func (res *Results) CSV(w io.Writer, name string) error {
	if !res.has(name) {
		return fmt.Errorf("ui: no %s in these results", name)
	}
	cw := csv.NewWriter(w)
	var err error
	switch name {
	case "ecdf":
		err = cw.WriteAll(ecdfRows(res.ECDF, 1, f))
	case "roc":
		err = cw.WriteAll(rocRows(res.ROC))
	case "pr":
		err = cw.WriteAll(prRows(res.ROC))
	default:
		err = cw.WriteAll(groupRows(res.Hosmer, f))
	}
	return err
}

// f formats a number of the CSV files and downloads: the shortest
// decimal that reads back to it.
func f(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// short formats a number of the pages' tables: 6 significant digits.
func short(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// ecdfRows are the header and every step-th row of the ECDF's table
// (the last row always), numbers formatted by f.
func ecdfRows(e *analysis.ECDF, step int, f func(float64) string) [][]string {
	rows := [][]string{{"threshold", "count", "ecdf", "smoothed", "band_lower", "band_upper"}}
	for i := range e.Thresholds {
		if (i+1)%step != 0 && i != len(e.Thresholds)-1 {
			continue
		}
		lo, hi := "", ""
		if b := e.Band95; b != nil {
			lo, hi = f(b.Lower[i]), f(b.Upper[i])
		}
		rows = append(rows, []string{f(e.Thresholds[i]), strconv.FormatInt(e.Counts[i], 10), f(e.Raw[i]), f(e.Smoothed[i]), lo, hi})
	}
	return rows
}

// curveRows appends the points (x, y) of series to rows.
func curveRows(rows [][]string, series string, x, y []float64) [][]string {
	for i := range x {
		rows = append(rows, []string{series, f(x[i]), f(y[i])})
	}
	return rows
}

func rocRows(r *analysis.ROC) [][]string {
	rows := curveRows([][]string{{"series", "fpr", "tpr"}}, "smoothed", r.FPR, r.TPR)
	rows = curveRows(rows, "raw", r.Raw.FPR, r.Raw.TPR)
	fpr, lower, upper := r.Band95.Edges()
	rows = curveRows(rows, "band_lower", fpr, lower)
	return curveRows(rows, "band_upper", fpr, upper)
}

func prRows(r *analysis.ROC) [][]string {
	rows := curveRows([][]string{{"series", "recall", "precision"}}, "smoothed", r.Recall, r.Precision)
	return curveRows(rows, "raw", r.Raw.Recall, r.Raw.Precision)
}

// groupRows are the header and the groups of h, numbers formatted by f.
func groupRows(h *analysis.Hosmer, f func(float64) string) [][]string {
	rows := [][]string{{"group", "first_bin", "last_bin", "size", "observed", "expected", "observed_sd", "rate_half_width_95"}}
	half := h.RateHalfWidths()
	for k, g := range h.Groups {
		sd, hw := "", ""
		if half != nil {
			sd, hw = f(h.ObservedSD[k]), f(half[k])
		}
		rows = append(rows, []string{strconv.Itoa(k + 1), strconv.Itoa(g.First), strconv.Itoa(g.Last), f(g.Size), f(g.Positives), f(g.Expected), sd, hw})
	}
	return rows
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]float64) []string {
	return slices.Sorted(maps.Keys(m))
}
