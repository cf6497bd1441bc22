package plot

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
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

// Encode writes the chart as SVG text naming its title, as PNG, and
// refuses another format or a bad series.
func TestEncode(t *testing.T) {
	c := ROCChart("ROC, ε = 1", nil, Series{Name: "a", X: []float64{0, 0.5, 1}, Y: []float64{0, 0.8, 1}})
	for _, tc := range []struct {
		format, prefix, holds string
	}{
		{"svg", "<?xml", "ROC, ε = 1"},
		{"png", "\x89PNG\r\n\x1a\n", ""},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.Encode(&b, tc.format); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(b.String(), tc.prefix) || !strings.Contains(b.String(), tc.holds) {
				t.Errorf("%s output starts %q, want %q and to hold %q", tc.format, b.String()[:min(b.Len(), 40)], tc.prefix, tc.holds)
			}
		})
	}
	if err := c.Encode(io.Discard, "gif"); err == nil {
		t.Error("format gif accepted")
	}
	bad := &Chart{Series: []Series{{Name: "bad", X: []float64{1}, Y: []float64{1, 2}}}}
	if err := bad.Encode(io.Discard, "svg"); err == nil {
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

// TestSeriesStylesDistinct (issue item 6): the series of a chart never
// share colour and dash pattern, even past the palette (the experiment
// figures had two black series).
func TestSeriesStylesDistinct(t *testing.T) {
	seen := map[string]int{}
	for k := range 2 * len(palette) {
		col, dashes := seriesStyle(k)
		key := fmt.Sprint(col, dashes)
		if j, ok := seen[key]; ok {
			t.Errorf("series %d and %d both drawn %s", j, k, key)
		}
		seen[key] = k
	}
}

// TestTickLabelsPlain (issue item 6): axis ticks read 10 and 0.001, not
// 1e+01, on log and linear axes.
func TestTickLabelsPlain(t *testing.T) {
	for _, c := range []struct {
		marker   plot.Ticker
		min, max float64
	}{
		{plot.LogTicks{Prec: 1}, 0.001, 1000},
		{plot.LogTicks{Prec: 1}, 1, 100},
		{plot.DefaultTicks{}, 0, 50},
	} {
		var labels []string
		for _, tk := range (plainTicks{c.marker}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		joined := strings.Join(labels, " ")
		if strings.Contains(joined, "e+") || strings.Contains(joined, "e-") || len(labels) == 0 {
			t.Errorf("ticks on [%g, %g]: %q", c.min, c.max, joined)
		}
	}
	for v, want := range map[float64]string{10: "10", 0.001: "0.001", 20000: "20000", 1e7: "1e+07", 0.30000000000000004: "0.3"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

// A log axis holding one value (a figure of a single ε) is drawn, not a
// panic.
func TestSaveSingleValueLogAxis(t *testing.T) {
	c := &Chart{Title: "t", LogX: true, LogY: true, Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{0.95}, StdErr: []float64{0.01}}}}
	if err := c.Save(filepath.Join(t.TempDir(), "c.png")); err != nil {
		t.Fatal(err)
	}
}

// A title wider than the image is broken into lines that fit, at
// spaces, keeping every word.
func TestWrapTitle(t *testing.T) {
	style := plot.New().Title.TextStyle
	width := chartWidth - 2*vg.Points(8)
	long := "Calibration, 10 groups, n = 2000, replace neighbours, partitioned, ε = 1; noise-aware p 0.423 ± 0.022 (B 500), naive χ² p 0.31"
	if style.Width(long) <= width {
		t.Fatalf("the test title fits on one line (%v ≤ %v)", style.Width(long), width)
	}
	got := wrapTitle(long, style.Width, width)
	lines := strings.Split(got, "\n")
	if len(lines) < 2 {
		t.Fatalf("wrapTitle kept one line: %q", got)
	}
	for _, l := range lines {
		if style.Width(l) > width {
			t.Errorf("line %q is %v wide, more than %v", l, style.Width(l), width)
		}
	}
	if strings.Join(strings.Fields(got), " ") != long {
		t.Errorf("wrapTitle lost words: %q", got)
	}
	if short := "ECDF"; wrapTitle(short, style.Width, width) != short {
		t.Errorf("a short title changed")
	}
}
