package plot

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCalibrationSeries(t *testing.T) {
	s := CalibrationSeries("g", []CalibrationGroup{
		{Size: 10, Observed: 2, Expected: 1},
		{Size: 0.5, Observed: 0.5, Expected: 0.25}, // no rate: left out
		{Size: 4, Observed: 4, Expected: 3},
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
	groups := []CalibrationGroup{{Size: 20, Observed: 1, Expected: 1.5}, {Size: 20, Observed: 11, Expected: 9.5}, {Size: 20, Observed: 18, Expected: 18.2}}
	c := CalibrationChart("Calibration, 3 groups", CalibrationSeries("private (H 1.23)", groups))
	if err := c.Save(filepath.Join(os.TempDir(), "calibration-example.png")); err != nil {
		panic(err)
	}
}
