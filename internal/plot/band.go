package plot

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Band is a shaded confidence band between Lower and Upper at X, drawn
// as steps (constant right of each point, like a Step series) when Step
// is set, else with straight edges.
type Band struct {
	Name            string
	X, Lower, Upper []float64
	Step            bool
}

// bandColour is the fill of every band: a translucent grey, so that the
// series drawn over it stay readable.
var bandColour = color.NRGBA{R: 120, G: 120, B: 120, A: 70}

// NewBandPolygon returns b as a filled polygon with no outline, for a
// gonum plot (Chart.Save draws a chart's Bands with it, below its series).
func NewBandPolygon(b Band) (*plotter.Polygon, error) {
	var upper, lower plotter.XYs
	for j, x := range b.X {
		if b.Step && j > 0 {
			upper = append(upper, plotter.XY{X: x, Y: b.Upper[j-1]})
			lower = append(lower, plotter.XY{X: x, Y: b.Lower[j-1]})
		}
		upper = append(upper, plotter.XY{X: x, Y: b.Upper[j]})
		lower = append(lower, plotter.XY{X: x, Y: b.Lower[j]})
	}
	ring := upper
	for j := len(lower) - 1; j >= 0; j-- {
		ring = append(ring, lower[j])
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil, err
	}
	poly.Color, poly.LineStyle.Width = bandColour, 0
	return poly, nil
}

// addBands draws c's bands on p and names them in its legend.
func (c *Chart) addBands(p *plot.Plot) error {
	for _, b := range c.Bands {
		poly, err := NewBandPolygon(b)
		if err != nil {
			return err
		}
		p.Add(poly)
		p.Legend.Add(b.Name, poly)
	}
	return nil
}
