// Package plot draws the line charts of fedecdf (simulation curves and the
// experiment figures of dp-ecdf §6) as small PNG files with
// gonum.org/v1/plot: a chart is a title, two labelled axes (linear or
// log10) and named series, drawn as lines, steps or points, with an
// optional ±1 standard error bar per point.
package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Style is how a series is drawn.
type Style int

// Series styles.
const (
	Line   Style = iota // straight segments between points
	Step                // a step function, constant right of each point
	Points              // markers only
	Dashed              // dashed segments
)

// Series is one named curve.
type Series struct {
	Name  string
	X, Y  []float64
	Style Style
	// StdErr, when not nil, draws a ±StdErr[j] bar at each point (a
	// standard error, or any half-width the series' name states).
	StdErr []float64
	// StdErrLow, when not nil, is the bar's length below each point
	// (StdErr then the length above): a bar clipped at a bound.
	StdErrLow []float64
}

// Chart is a line chart.
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// XMin, XMax, YMin, YMax fix the axes' ranges when Max > Min.
	XMin, XMax, YMin, YMax float64
	Series                 []Series
	// Bands are shaded bands drawn below the series.
	Bands []Band
	// Legend places the legend: TopRight (default), TopLeft or
	// BottomRight.
	Legend Corner
}

// Corner is a corner of the plotting area.
type Corner int

// Legend corners.
const (
	TopRight Corner = iota
	TopLeft
	BottomRight
)

// palette are distinguishable colours: Okabe–Ito (yellow, too pale on
// white, left out), then darker and greyer tones. Series beyond it reuse
// the colours with a different dash pattern (seriesStyle), so no two
// series of a chart look alike.
var palette = []color.RGBA{
	{0, 0, 0, 255}, {230, 159, 0, 255}, {86, 180, 233, 255}, {0, 158, 115, 255},
	{213, 94, 0, 255}, {0, 114, 178, 255}, {204, 121, 167, 255},
	{136, 34, 85, 255}, {153, 153, 51, 255}, {68, 170, 153, 255}, {102, 51, 0, 255},
	{128, 128, 128, 255}, {51, 34, 136, 255}, {170, 68, 153, 255},
}

// dashPatterns are the dash patterns of successive rounds of the palette
// for solid series (nil: solid).
var dashPatterns = [][]vg.Length{nil, {vg.Points(1), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}}

// seriesStyle returns the colour and, for a solid series, the dash
// pattern of the k-th series of a chart: distinct for every k below
// len(palette)·len(dashPatterns).
func seriesStyle(k int) (color.RGBA, []vg.Length) {
	return palette[k%len(palette)], dashPatterns[(k/len(palette))%len(dashPatterns)]
}

// plainTicks labels the ticks of marker in plain decimal notation (10,
// 0.001, 20000), not as 1e+01, switching to exponents only beyond
// [1e-4, 1e6).
type plainTicks struct{ marker plot.Ticker }

// Ticks returns the ticks of the wrapped marker, relabelled.
func (t plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := t.marker.Ticks(min, max)
	for k := range ticks {
		if ticks[k].Label != "" {
			ticks[k].Label = tickLabel(ticks[k].Value)
		}
	}
	return ticks
}

// tickLabel prints v in plain decimal notation with up to 6 significant
// digits, or in exponent notation far from 1.
func tickLabel(v float64) string {
	if a := math.Abs(v); v != 0 && (a < 1e-4 || a >= 1e6) {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(round6(v), 'f', -1, 64)
}

// round6 rounds v to 6 significant digits.
func round6(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// chartWidth is the width of a chart's image.
const chartWidth = 6 * vg.Inch

// wrapTitle breaks title into lines no wider than width as measured by
// measure, after a comma, semicolon or space, so that a long title is
// not cut off at the image's edges; a single word wider than width
// stays whole.
func wrapTitle(title string, measure func(string) vg.Length, width vg.Length) string {
	var lines []string
	line := ""
	for _, word := range strings.SplitAfter(title, " ") {
		if line != "" && measure(strings.TrimSpace(line+word)) > width {
			lines = append(lines, strings.TrimSpace(line))
			line = ""
		}
		line += word
	}
	return strings.Join(append(lines, strings.TrimSpace(line)), "\n")
}

// Save draws c into a PNG file of 6 × 4 inches at 96 dpi.
func (c *Chart) Save(path string) error {
	p, err := c.plot()
	if err != nil {
		return err
	}
	if err := p.Save(chartWidth, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("chart %q: %w", c.Title, err)
	}
	return nil
}

// Encode draws c, 6 × 4 inches, into w as format: "svg" (text naming
// its fonts, which the viewer's system supplies: the image loads
// nothing) or "png" (96 dpi).
func (c *Chart) Encode(w io.Writer, format string) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("chart %q: format %q: want svg or png", c.Title, format)
	}
	p, err := c.plot()
	if err != nil {
		return err
	}
	wt, err := p.WriterTo(chartWidth, 4*vg.Inch, format)
	if err == nil {
		_, err = wt.WriteTo(w)
	}
	if err != nil {
		return fmt.Errorf("chart %q: %w", c.Title, err)
	}
	return nil
}

// plot builds the gonum plot of c.
func (c *Chart) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = wrapTitle(c.Title, p.Title.TextStyle.Width, chartWidth-2*vg.Points(8))
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Legend.Top, p.Legend.Left = c.Legend != BottomRight, c.Legend == TopLeft
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(4), -vg.Points(4)
	if c.Legend == TopLeft {
		p.Legend.XOffs = vg.Points(4)
	}
	if c.Legend == BottomRight {
		p.Legend.YOffs = vg.Points(4)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{plot.DefaultTicks{}}, plainTicks{plot.DefaultTicks{}}
	if c.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plainTicks{plot.LogTicks{Prec: 1}}
	}
	if c.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plainTicks{plot.LogTicks{Prec: 1}}
	}
	if err := c.addBands(p); err != nil {
		return nil, fmt.Errorf("chart %q: band: %w", c.Title, err)
	}
	for k, s := range c.Series {
		col, dashes := seriesStyle(k)
		if err := c.add(p, s, col, dashes); err != nil {
			return nil, fmt.Errorf("chart %q, series %q: %w", c.Title, s.Name, err)
		}
	}
	if c.XMax > c.XMin {
		p.X.Min, p.X.Max = c.XMin, c.XMax
	}
	if c.YMax > c.YMin {
		p.Y.Min, p.Y.Max = c.YMin, c.YMax
	}
	widenLogRange(&p.X, c.LogX)
	widenLogRange(&p.Y, c.LogY)
	return p, nil
}

// widenLogRange widens the range of a log axis holding a single value v
// (e.g. a figure of one ε) to [v/2, 2v]: a log axis of zero width has no
// ticks.
func widenLogRange(a *plot.Axis, log bool) {
	if log && a.Min == a.Max && a.Min > 0 {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}

// add draws s on p; points that a log axis cannot show are left out.
func (c *Chart) add(p *plot.Plot, s Series, col color.RGBA, dashes []vg.Length) error {
	if len(s.X) != len(s.Y) || (s.StdErr != nil && len(s.StdErr) != len(s.Y)) || (s.StdErrLow != nil && len(s.StdErrLow) != len(s.Y)) {
		return fmt.Errorf("%d x, %d y and %d standard errors", len(s.X), len(s.Y), len(s.StdErr))
	}
	var xys plotter.XYs
	var errs plotter.YErrors
	for j := range s.X {
		x, y := s.X[j], s.Y[j]
		if !c.drawable(x, c.LogX) || !c.drawable(y, c.LogY) {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
		if s.StdErr != nil {
			lo := s.StdErr[j]
			if s.StdErrLow != nil {
				lo = s.StdErrLow[j]
			}
			if c.LogY {
				lo = min(lo, 0.999*y) // keep the bar above 0
			}
			errs = append(errs, struct{ Low, High float64 }{lo, s.StdErr[j]})
		}
	}
	if len(xys) == 0 {
		return nil
	}
	if s.Style == Points {
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(sc)
		p.Legend.Add(s.Name, sc)
	} else {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = col, vg.Points(1.2), dashes
		switch s.Style {
		case Step:
			l.StepStyle = plotter.PostStep
		case Dashed:
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	if errs != nil {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return err
		}
		eb.Color = col
		p.Add(eb)
	}
	return nil
}

// drawable says whether v can be placed on an axis (log or linear).
func (c *Chart) drawable(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}
