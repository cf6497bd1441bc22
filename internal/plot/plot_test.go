package plot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSaveWritesPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	c := &Chart{Title: "t", XLabel: "x", YLabel: "y", LogX: true, LogY: true, Series: []Series{
		{Name: "a", X: []float64{0, 1, 10}, Y: []float64{1, 2, 3}},
		{Name: "b", X: []float64{1, 10}, Y: []float64{1, 0.5}, Style: Points, StdErr: []float64{0.1, 0.1}},
		{Name: "c", X: []float64{1, 10}, Y: []float64{1, 3}, Style: Step},
	}}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG", path)
	}
	bad := &Chart{Series: []Series{{Name: "bad", X: []float64{1}, Y: []float64{1, 2}}}}
	if err := bad.Save(path); err == nil {
		t.Error("series with 1 x and 2 y accepted")
	}
}

func ExampleChart_Save() {
	c := &Chart{
		Title: "ECDF", XLabel: "τ", YLabel: "F(τ)", Legend: TopLeft,
		Series: []Series{{Name: "true", X: []float64{0.25, 0.5, 1}, Y: []float64{0.2, 0.7, 1}, Style: Step}},
	}
	if err := c.Save(filepath.Join(os.TempDir(), "ecdf-example.png")); err != nil {
		panic(err)
	}
}
