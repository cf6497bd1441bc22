package simulate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/plot"
)

// WritePlots draws the report's curves as PNG files in dir (created if
// missing) and returns their paths: ecdf.png, the true, private and
// smoothed ECDF of the scores (unless the run made no ECDF release), and roc.png, the true, private and
// smoothed ROC curves (as dp-ecdf Fig. 1), and, with a Hosmer–Lemeshow
// test, calibration.png, observed against expected positives per group.
func (r *Report) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plot directory: %w", err)
	}
	charts := map[string]*plot.Chart{"roc.png": r.rocChart()}
	names := []string{"roc.png"}
	if r.ECDF != nil {
		charts["ecdf.png"] = r.ecdfChart()
		names = append([]string{"ecdf.png"}, names...)
	}
	if r.Hosmer != nil && r.Hosmer.Undefined == "" {
		charts["calibration.png"] = r.calibrationChart()
		names = append(names, "calibration.png")
	}
	var paths []string
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := charts[name].Save(path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// ecdfChart plots the ECDF of the scores; its title names the ECDF
// release's own mechanism and ε.
func (r *Report) ecdfChart() *plot.Chart {
	var bands []plot.Band
	if b := r.ECDF.Band95; b != nil {
		bands = []plot.Band{{Name: "simultaneous 95 % band", X: r.ECDF.Thresholds, Lower: b.Lower, Upper: b.Upper, Step: true}}
	}
	return &plot.Chart{
		Bands:  bands,
		Title:  fmt.Sprintf("ECDF of the scores, %s, %s, ε = %s", r.Short(), r.ECDF.Mechanism, formatFloat(r.ECDF.Epsilon)),
		XLabel: "score threshold τ", YLabel: "F(τ)", Legend: plot.TopLeft,
		Series: []plot.Series{
			{Name: "true", X: r.ECDF.Thresholds, Y: r.True.ECDF, Style: plot.Step},
			{Name: "private", X: r.ECDF.Thresholds, Y: r.ECDF.Raw, Style: plot.Step},
			{Name: "smoothed", X: r.ECDF.Thresholds, Y: r.ECDF.Smoothed, Style: plot.Dashed},
		},
	}
}

// rocChart plots the ROC curves over the private curve's 95 % band; its
// title names the ROC/PR release's own mechanism and ε. The area error
// goes with the curve it measures.
func (r *Report) rocChart() *plot.Chart {
	series := []plot.Series{{Name: fmt.Sprintf("true (AUC %.3f)", r.True.ROC.AUC), X: r.True.ROC.FPR, Y: r.True.ROC.TPR}}
	if r.ROC.Smoothing == "none" {
		series = append(series, plot.Series{Name: fmt.Sprintf("private (AUC %.3f, area error %.3f)", r.ROC.Raw.AUC, r.Error.ROCArea), X: r.ROC.Raw.FPR, Y: r.ROC.Raw.TPR})
	} else {
		series = append(series,
			plot.Series{Name: fmt.Sprintf("private (AUC %.3f)", r.ROC.Raw.AUC), X: r.ROC.Raw.FPR, Y: r.ROC.Raw.TPR},
			plot.Series{Name: fmt.Sprintf("smoothed (AUC %.3f, area error %.3f)", r.ROC.AUC, r.Error.ROCArea), X: r.ROC.FPR, Y: r.ROC.TPR, Style: plot.Dashed})
	}
	return plot.ROCChart(fmt.Sprintf("ROC, %s, %s, ε = %s for ROC", r.Short(), r.ROC.Mechanism, formatFloat(r.ROC.Epsilon)), r.ROC.Band95, series...)
}

// calibrationChart plots each Hosmer–Lemeshow group's observed positive
// rate O_1/size against its expected rate E_1/size, exact and for each
// private allocation, next to the diagonal of perfect calibration.
func (r *Report) calibrationChart() *plot.Chart {
	h := r.Hosmer
	series := []plot.Series{plot.CalibrationSeries(fmt.Sprintf("true (H %.2f)", *h.StatisticTrue), h.True)}
	for _, a := range h.Allocations {
		if a.Statistic != nil {
			series = append(series, plot.CalibrationSeriesBars(fmt.Sprintf("private, %s (H %.2f; %s)", a.label(), *a.Statistic, analysis.CalibrationBarsLegend), a.Groups, a.RateHalfWidths()))
		}
	}
	title := fmt.Sprintf("Calibration, %d groups, %s", h.Groups, r.Short())
	if len(h.Allocations) > 0 {
		a := &h.Allocations[0]
		title += fmt.Sprintf(", %s; %s", r.allocationMechanism(a), analysis.ShortPValues(&a.Hosmer))
	}
	return plot.CalibrationChart(title, series...)
}

// allocationMechanism names the mechanism of the release(s) behind
// allocation a: the ROC/PR release's for the roc allocation (whose
// numbers come from it), the run's --mechanism for the others.
func (r *Report) allocationMechanism(a *HosmerAllocation) string {
	if a.Plan == hosmerROC && r.ROC != nil {
		return r.ROC.Mechanism
	}
	return r.Mechanism
}

// formatFloat prints x with at most 6 significant digits, so that a sum
// of shares prints 0.1, not 0.09999999999999999.
func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
