package plot

// ROCBand is a confidence band of TPR against FPR as a ROC chart draws
// it (analysis.ROCBand implements it, a nil one having no edges).
type ROCBand interface {
	// Legend names the band.
	Legend() string
	// Edges returns the band's lower and upper TPR at each FPR; none
	// when there is no band.
	Edges() (fpr, lower, upper []float64)
}

// ROCChart returns the ROC chart of series (each an FPR–TPR curve) on
// the unit square, drawn over band, shaded with straight edges, when it
// has edges.
func ROCChart(title string, band ROCBand, series ...Series) *Chart {
	c := &Chart{
		Title:  title,
		XLabel: "false positive rate", YLabel: "true positive rate", Legend: BottomRight,
		XMin: 0, XMax: 1, YMin: 0, YMax: 1,
		Series: series,
	}
	if band == nil {
		return c
	}
	if fpr, lower, upper := band.Edges(); len(fpr) > 0 {
		c.Bands = []Band{{Name: band.Legend(), X: fpr, Lower: lower, Upper: upper}}
	}
	return c
}
