// Package plot draws the line charts of fedecdf (simulation curves and the
// experiment figures of dp-ecdf §6) as small PNG files with
// gonum.org/v1/plot: a chart is a title, two labelled axes (linear or
// log10) and named series, drawn as lines, steps or points, with an
// optional ±1 standard error bar per point.
package plot

import (
	"fmt"
	"image/color"
	"math"

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
	// StdErr, when not nil, draws a ±StdErr[j] bar at each point.
	StdErr []float64
}

// Chart is a line chart.
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// XMin, XMax, YMin, YMax fix the axes' ranges when Max > Min.
	XMin, XMax, YMin, YMax float64
	Series                 []Series
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

// palette are distinguishable colours (Okabe–Ito).
var palette = []color.RGBA{
	{0, 0, 0, 255}, {230, 159, 0, 255}, {86, 180, 233, 255}, {0, 158, 115, 255},
	{213, 94, 0, 255}, {0, 114, 178, 255}, {204, 121, 167, 255}, {240, 228, 66, 255},
}

// Save draws c into a PNG file of 6 × 4 inches at 96 dpi.
func (c *Chart) Save(path string) error {
	p := plot.New()
	p.Title.Text = c.Title
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
	if c.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: 1}
	}
	if c.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: 1}
	}
	for k, s := range c.Series {
		if err := c.add(p, s, palette[k%len(palette)]); err != nil {
			return fmt.Errorf("chart %q, series %q: %w", c.Title, s.Name, err)
		}
	}
	if c.XMax > c.XMin {
		p.X.Min, p.X.Max = c.XMin, c.XMax
	}
	if c.YMax > c.YMin {
		p.Y.Min, p.Y.Max = c.YMin, c.YMax
	}
	if err := p.Save(6*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("chart %q: %w", c.Title, err)
	}
	return nil
}

// add draws s on p; points that a log axis cannot show are left out.
func (c *Chart) add(p *plot.Plot, s Series, col color.RGBA) error {
	if len(s.X) != len(s.Y) || (s.StdErr != nil && len(s.StdErr) != len(s.Y)) {
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
		l.Color, l.Width = col, vg.Points(1.2)
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
