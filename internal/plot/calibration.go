package plot

// CalibrationGroup is one Hosmer–Lemeshow group as a calibration chart
// shows it: its size and its observed (O₁ = Σy) and expected (E₁ = Σp)
// positives, exact or released.
type CalibrationGroup struct {
	Size, Observed, Expected float64
}

// CalibrationSeries returns the points (E₁/size, O₁/size) of groups, the
// expected against the observed positive rate; a group with a size below
// one instance (a released size can be) has no rate and is left out.
func CalibrationSeries(name string, groups []CalibrationGroup) Series {
	s := Series{Name: name, Style: Points}
	for _, g := range groups {
		if g.Size >= 1 {
			s.X, s.Y = append(s.X, g.Expected/g.Size), append(s.Y, g.Observed/g.Size)
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
