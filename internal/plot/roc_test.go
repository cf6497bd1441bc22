package plot

import (
	"path/filepath"
	"testing"
)

// band is a ROCBand; a nil one has no edges.
type band struct{ fpr, lower, upper []float64 }

func (b *band) Legend() string { return "b" }

func (b *band) Edges() (fpr, lower, upper []float64) {
	if b == nil {
		return nil, nil, nil
	}
	return b.fpr, b.lower, b.upper
}

// ROCChart shades a band with edges under the curves, and none for a
// nil band, whether an untyped nil or a nil pointer.
func TestROCChart(t *testing.T) {
	curve := Series{Name: "c", X: []float64{1, 0.5, 0}, Y: []float64{1, 0.8, 0}}
	var none *band
	for _, c := range []struct {
		name  string
		band  ROCBand
		bands int
	}{
		{"band", &band{[]float64{0, 0.5, 1}, []float64{0, 0.7, 1}, []float64{0.1, 0.9, 1}}, 1},
		{"nil pointer", none, 0},
		{"nil", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := ROCChart("roc", c.band, curve)
			if len(ch.Bands) != c.bands || len(ch.Series) != 1 || ch.XMax != 1 || ch.YMax != 1 {
				t.Fatalf("ROCChart = %+v", ch)
			}
			if c.bands == 1 && (ch.Bands[0].Name != "b" || ch.Bands[0].Step) {
				t.Errorf("band %+v", ch.Bands[0])
			}
			if err := ch.Save(filepath.Join(t.TempDir(), "roc.png")); err != nil {
				t.Fatal(err)
			}
		})
	}
}
