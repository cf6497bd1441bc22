package plot

// CalibrationGroup is one Hosmer–Lemeshow group as a calibration chart
// shows it (hosmer.Group implements it).
type CalibrationGroup interface {
	// Rates returns the group's expected and observed positive rates
	// E₁/size and O₁/size, and false when it has no rate (a size below
	// one instance, as a released size can be).
	Rates() (expected, observed float64, ok bool)
}

// CalibrationSeries returns the points (E₁/size, O₁/size) of groups, the
// expected against the observed positive rate, leaving out the groups
// without a rate.
func CalibrationSeries[G CalibrationGroup](name string, groups []G) Series {
	s := Series{Name: name, Style: Points}
	for _, g := range groups {
		if x, y, ok := g.Rates(); ok {
			s.X, s.Y = append(s.X, x), append(s.Y, y)
		}
	}
	return s
}

// CalibrationSeriesBars is CalibrationSeries with an error bar of
// half-width halfWidths[k] at group k's point (for a 95 % bar, 1.96
// standard deviations of its observed rate); name should say what the
// bars hold. halfWidths is aligned with groups; nil gives no bars.
func CalibrationSeriesBars[G CalibrationGroup](name string, groups []G, halfWidths []float64) Series {
	s := CalibrationSeries(name, groups)
	if halfWidths == nil || len(halfWidths) != len(groups) {
		return s
	}
	s.StdErr = []float64{}
	for k, g := range groups {
		if _, _, ok := g.Rates(); ok {
			s.StdErr = append(s.StdErr, halfWidths[k])
		}
	}
	return s
}

// CalibrationChart returns the calibration chart of series (from
// CalibrationSeries) on the unit square, after the dashed diagonal of
// perfect calibration.
func CalibrationChart(title string, series ...Series) *Chart {
	return &Chart{
		Title:  title,
		XLabel: "expected positive rate E₁/size", YLabel: "observed positive rate O₁/size", Legend: TopLeft,
		XMin: 0, XMax: 1, YMin: 0, YMax: 1,
		Series: append([]Series{{Name: "perfect calibration", X: []float64{0, 1}, Y: []float64{0, 1}, Style: Dashed}}, series...),
	}
}
