package plot

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// group is a CalibrationGroup of size, observed and expected positives.
type group struct{ size, observed, expected float64 }

func (g group) Rates() (expected, observed float64, ok bool) {
	return g.expected / g.size, g.observed / g.size, g.size >= 1
}

func TestCalibrationSeries(t *testing.T) {
	s := CalibrationSeries("g", []group{
		{size: 10, observed: 2, expected: 1},
		{size: 0.5, observed: 0.5, expected: 0.25}, // no rate: left out
		{size: 4, observed: 4, expected: 3},
	})
	if s.Name != "g" || s.Style != Points || !slices.Equal(s.X, []float64{0.1, 0.75}) || !slices.Equal(s.Y, []float64{0.2, 1}) {
		t.Fatalf("CalibrationSeries = %+v", s)
	}
	c := CalibrationChart("calibration", s)
	if len(c.Series) != 2 || c.Series[0].Style != Dashed || c.Series[1].Name != "g" || c.XMax != 1 || c.YMax != 1 {
		t.Fatalf("CalibrationChart = %+v", c)
	}
}

// The chart's axes fit the points and their bars (a square with the
// diagonal from corner to corner), and released rates outside [0, 1]
// and their bars are clipped to it.
func TestCalibrationChartFitsData(t *testing.T) {
	low := []group{{size: 100, observed: 1, expected: 2}, {size: 100, observed: 4, expected: 3}, {size: 100, observed: -3, expected: 5}}
	s := CalibrationSeriesBars("g", low, []float64{0.01, 0.01, 0.05})
	if !slices.Equal(s.Y, []float64{0.01, 0.04, 0}) || s.StdErrLow[2] != 0 || math.Abs(s.StdErr[2]-0.02) > 1e-12 {
		t.Fatalf("clipped series = %+v", s)
	}
	c := CalibrationChart("low prevalence", s)
	if c.XMin != 0 || c.XMax > 0.1 || c.XMax < 0.06 || c.YMin != c.XMin || c.YMax != c.XMax {
		t.Errorf("axes [%g, %g] × [%g, %g], want a square fitted to [0, 0.06]", c.XMin, c.XMax, c.YMin, c.YMax)
	}
	if d := c.Series[0]; !slices.Equal(d.X, []float64{c.XMin, c.XMax}) || !slices.Equal(d.Y, d.X) {
		t.Errorf("diagonal %v, %v, want corner to corner", d.X, d.Y)
	}
	mid := CalibrationChart("mid", CalibrationSeries("g", []group{{size: 10, observed: 4, expected: 5}, {size: 10, observed: 6, expected: 6}}))
	if mid.XMin < 0.3 || mid.XMax > 0.7 {
		t.Errorf("axes [%g, %g], want fitted to [0.4, 0.6]", mid.XMin, mid.XMax)
	}
	for _, r := range []struct{ rate, half, r, lo, hi float64 }{{0, 8.8739, 0, 0, 1}, {1.2, 0.1, 1, 1, 1}, {0.5, 0.1, 0.5, 0.4, 0.6}} {
		if r0, lo, hi := RateInterval(r.rate, r.half); r0 != r.r || math.Abs(lo-r.lo) > 1e-12 || math.Abs(hi-r.hi) > 1e-12 {
			t.Errorf("RateInterval(%g, %g) = %g [%g, %g]", r.rate, r.half, r0, lo, hi)
		}
	}
}

// CalibrationSeriesBars keeps the bar of each group with a rate, and the
// chart draws them (one error-bar plotter per barred series).
func TestCalibrationSeriesBars(t *testing.T) {
	groups := []group{{size: 10, observed: 2, expected: 1}, {size: 0.5, observed: 0.5, expected: 0.25}, {size: 4, observed: 4, expected: 3}}
	s := CalibrationSeriesBars("g", groups, []float64{0.05, 9, 0.2})
	// The second bar is clipped above at rate 1.
	if len(s.X) != 2 || math.Abs(s.StdErr[0]-0.05) > 1e-12 || s.StdErr[1] != 0 || math.Abs(s.StdErrLow[1]-0.2) > 1e-12 {
		t.Fatalf("CalibrationSeriesBars = %+v", s)
	}
	if s := CalibrationSeriesBars("g", groups, nil); s.StdErr != nil {
		t.Errorf("no half-widths gave bars %v", s.StdErr)
	}
	// The bars are drawn: the PNG differs from the one without them.
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with.png"), filepath.Join(dir, "without.png")
	if err := CalibrationChart("calibration", s).Save(with); err != nil {
		t.Fatal(err)
	}
	if err := CalibrationChart("calibration", CalibrationSeries("g", groups)).Save(without); err != nil {
		t.Fatal(err)
	}
	a, errA := os.ReadFile(with)
	b, errB := os.ReadFile(without)
	if errA != nil || errB != nil || bytes.Equal(a, b) {
		t.Errorf("the chart with bars draws the same PNG as without (%v, %v)", errA, errB)
	}
}

func ExampleCalibrationChart() {
	groups := []group{{size: 20, observed: 1, expected: 1.5}, {size: 20, observed: 11, expected: 9.5}, {size: 20, observed: 18, expected: 18.2}}
	c := CalibrationChart("Calibration, 3 groups", CalibrationSeries("private (H 1.23)", groups))
	if err := c.Save(filepath.Join(os.TempDir(), "calibration-example.png")); err != nil {
		panic(err)
	}
}
