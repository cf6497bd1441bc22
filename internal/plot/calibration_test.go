package plot

import (
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

func ExampleCalibrationChart() {
	groups := []group{{size: 20, observed: 1, expected: 1.5}, {size: 20, observed: 11, expected: 9.5}, {size: 20, observed: 18, expected: 18.2}}
	c := CalibrationChart("Calibration, 3 groups", CalibrationSeries("private (H 1.23)", groups))
	if err := c.Save(filepath.Join(os.TempDir(), "calibration-example.png")); err != nil {
		panic(err)
	}
}
