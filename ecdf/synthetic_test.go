package ecdf

import (
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// TestValuesRoundTrip checks that binning the listed instances of X_pois
// on its grid gives its histogram back (value v falls in bin v).
func TestValuesRoundTrip(t *testing.T) {
	hist, _ := synthetic.PoissonHistogram(2, 500, 1)
	g, err := PoissonGrid(500)
	if err != nil {
		t.Fatal(err)
	}
	xs, err := Values(hist, g)
	if err != nil {
		t.Fatal(err)
	}
	bins, clamped, err := g.BinAll(xs, false)
	if err != nil || clamped != 0 {
		t.Fatal(err, clamped)
	}
	back, _ := Histogram(bins, g.Len())
	if !slices.Equal(back, hist) {
		t.Error("binning Values(hist) does not give hist back")
	}
	if g.Threshold(17) != 17 {
		t.Errorf("τ_17 = %v, want 17", g.Threshold(17))
	}
	if _, err := Values(hist[:10], g); err == nil {
		t.Error("Values accepted a histogram of the wrong length")
	}
}
