package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"strings"
	"testing"
)

// tiny is a fast setting: 64 bins, two ε, 40 runs.
func tiny() Config {
	return Config{Runs: 40, Epsilons: []float64{0.5, 8}, Bins: 64, Lambda: 20, Quantiles: 50, Mechanisms: []string{"tree", "kary"}, Seed: 2}
}

// TestFig4Shapes: one ECDF and one inverse series per mechanism plus the
// tree's theory, each with one point per ε; the ECDF MSE agrees with its
// exact expectation within 5 standard errors, and falls with ε.
func TestFig4Shapes(t *testing.T) {
	f, err := Fig4(context.Background(), tiny())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Series) != 5 {
		t.Fatalf("%d series, want 5 (ECDF+inverse for tree and kary, tree theory)", len(f.Series))
	}
	for _, s := range f.Series {
		if len(s.X) != 2 || len(s.Y) != 2 {
			t.Errorf("series %q has %d x and %d y, want 2", s.Name, len(s.X), len(s.Y))
		}
	}
	tree, theory := f.Series[0], f.Series[2]
	if !strings.Contains(theory.Name, "theory") {
		t.Fatalf("series 2 is %q, want the tree's theory", theory.Name)
	}
	for j := range tree.Y {
		if z := (tree.Y[j] - theory.Y[j]) / tree.StdErr[j]; math.Abs(z) > 5 {
			t.Errorf("ε = %g: tree MSE %g vs exact %g is %.1f standard errors off", tree.X[j], tree.Y[j], theory.Y[j], z)
		}
	}
	if tree.Y[1] >= tree.Y[0] {
		t.Errorf("MSE at ε = 8 (%g) not below that at ε = 0.5 (%g)", tree.Y[1], tree.Y[0])
	}
	var b bytes.Buffer
	if err := f.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 1+5*2 {
		t.Errorf("CSV: %d rows (%v), want header + 10", len(rows), err)
	}
}

func TestRunRejectsUnknownFigure(t *testing.T) {
	if _, err := Run(context.Background(), tiny(), []string{"fig99"}); err == nil || !strings.Contains(err.Error(), "fig99") {
		t.Errorf("error %v does not name fig99", err)
	}
}

func TestAutoDroppedWhenDuplicate(t *testing.T) {
	cfg := tiny()
	cfg.Mechanisms = []string{"tree", "kary", "auto"}
	names, notes, err := mechanisms(cfg.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if len(names)+len(notes) != 3 {
		t.Errorf("names %v, notes %v: every mechanism is either kept or explained", names, notes)
	}
}
