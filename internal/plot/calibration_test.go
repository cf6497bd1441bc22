package plot

import (
	"bytes"
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

// CalibrationSeriesBars keeps the bar of each group with a rate, and the
// chart draws them (one error-bar plotter per barred series).
func TestCalibrationSeriesBars(t *testing.T) {
	groups := []group{{size: 10, observed: 2, expected: 1}, {size: 0.5, observed: 0.5, expected: 0.25}, {size: 4, observed: 4, expected: 3}}
	s := CalibrationSeriesBars("g", groups, []float64{0.05, 9, 0.2})
	if !slices.Equal(s.StdErr, []float64{0.05, 0.2}) || len(s.X) != 2 {
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
