package plot

import "math"

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
// without a rate. A released rate can leave [0, 1] (noise); it is
// clipped to it, as the true rate lies there.
func CalibrationSeries[G CalibrationGroup](name string, groups []G) Series {
	s := Series{Name: name, Style: Points}
	for _, g := range groups {
		if x, y, ok := g.Rates(); ok {
			s.X, s.Y = append(s.X, clip01(x)), append(s.Y, clip01(y))
		}
	}
	return s
}

// CalibrationSeriesBars is CalibrationSeries with an error bar of
// half-width halfWidths[k] about group k's released rate (for a 95 %
// bar, 1.96 standard deviations of its observed rate), clipped to
// [0, 1]; name should say what the bars hold. halfWidths is aligned
// with groups; nil gives no bars.
func CalibrationSeriesBars[G CalibrationGroup](name string, groups []G, halfWidths []float64) Series {
	s := CalibrationSeries(name, groups)
	if halfWidths == nil || len(halfWidths) != len(groups) {
		return s
	}
	s.StdErr, s.StdErrLow = []float64{}, []float64{}
	for k, g := range groups {
		if _, y, ok := g.Rates(); ok {
			r, lo, hi := RateInterval(y, halfWidths[k])
			s.StdErr, s.StdErrLow = append(s.StdErr, hi-r), append(s.StdErrLow, r-lo)
		}
	}
	return s
}

// RateInterval returns a released rate and its interval rate ± half,
// all clipped to [0, 1], where a true rate lies.
func RateInterval(rate, half float64) (r, lo, hi float64) {
	return clip01(rate), clip01(rate - half), clip01(rate + half)
}

func clip01(x float64) float64 { return min(max(x, 0), 1) }

// CalibrationChart returns the calibration chart of series (from
// CalibrationSeries) after the dashed diagonal of perfect calibration,
// on the square [lo, hi]² fitted to the points and their bars (5 %
// margin, within [0, 1]), so that data at a low prevalence are not
// squashed into a corner and the diagonal stays at 45°.
func CalibrationChart(title string, series ...Series) *Chart {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for j := range s.X {
			yLo, yHi := s.Y[j], s.Y[j]
			if s.StdErr != nil {
				yHi += s.StdErr[j]
				yLo -= s.StdErr[j]
				if s.StdErrLow != nil {
					yLo = s.Y[j] - s.StdErrLow[j]
				}
			}
			lo, hi = min(lo, s.X[j], yLo), max(hi, s.X[j], yHi)
		}
	}
	if lo > hi { // no point
		lo, hi = 0, 1
	}
	pad := max(0.05*(hi-lo), 0.01)
	lo, hi = max(lo-pad, 0), min(hi+pad, 1)
	return &Chart{
		Title:  title,
		XLabel: "expected positive rate E₁/size", YLabel: "observed positive rate O₁/size", Legend: TopLeft,
		XMin: lo, XMax: hi, YMin: lo, YMax: hi,
		Series: append([]Series{{Name: "perfect calibration", X: []float64{lo, hi}, Y: []float64{lo, hi}, Style: Dashed}}, series...),
	}
}
