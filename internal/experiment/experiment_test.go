package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tiny is a fast setting: 64 bins, two ε, 40 runs.
func tiny() Config {
	return Config{Runs: 40, Epsilons: []float64{0.5, 8}, Bins: 64, Lambda: 20, Quantiles: 50, Mechanisms: []string{"tree", "kary"}, Seed: 2}
}

// TestFig4Shapes: one ECDF, one raw and one smoothed inverse series per
// mechanism plus the tree's theory, each with one point per ε; the ECDF MSE agrees with its
// exact expectation within 5 standard errors, and falls with ε.
func TestFig4Shapes(t *testing.T) {
	f, err := Fig4(context.Background(), tiny())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Series) != 7 {
		t.Fatalf("%d series, want 7 (ECDF, inverse, smoothed inverse for tree and kary; tree theory)", len(f.Series))
	}
	for _, s := range f.Series {
		if len(s.X) != 2 || len(s.Y) != 2 {
			t.Errorf("series %q has %d x and %d y, want 2", s.Name, len(s.X), len(s.Y))
		}
	}
	tree, theory := f.Series[0], f.Series[3]
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
	if err != nil || len(rows) != 1+7*2 {
		t.Errorf("CSV: %d rows (%v), want header + 14", len(rows), err)
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

// TestFig2Ratios: pointwise l2 (PAVA + clip) is the Euclidean projection
// onto a convex set that contains F, so it never moves F̂ away from F:
// every run's ratio, hence the mean, is at most 1. At ε = 2^40 the tree's
// and k-ary's integer noise is 0, F̂ = F and every ratio is exactly 1
// (cascade's discrete Gaussian cannot be sampled at that scale).
func TestFig2Ratios(t *testing.T) {
	cfg := tiny()
	cfg.Runs = 10
	for _, name := range []string{"tree", "kary", "cascade"} {
		cfg.Epsilons = []float64{0.5, 1 << 40}
		if name == "cascade" {
			cfg.Epsilons = cfg.Epsilons[:1]
		}
		f, err := smoothingVsEpsilon("fig2-"+name, name)(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Series) != len(smoothingMethods)+1 || f.Series[1].Name != "l2" {
			t.Fatalf("%s: %d series", f.ID, len(f.Series))
		}
		if l2 := f.Series[1].Y[0]; !(l2 <= 1) {
			t.Errorf("%s: l2 ratio %g above 1", f.ID, l2)
		}
		for _, s := range f.Series {
			if len(s.Y) != len(cfg.Epsilons) || (len(s.Y) == 2 && s.Y[1] != 1) {
				t.Errorf("%s, %s: ratios %v, want one per ε, exactly 1 at ε = 2^40", f.ID, s.Name, s.Y)
			}
		}
	}
}

// TestFig3Ratios: one point per λ, l2 never above 1.
func TestFig3Ratios(t *testing.T) {
	cfg := tiny()
	cfg.Lambdas = []float64{1, 30}
	cfg.Runs = 5
	f, err := Fig3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l2 := f.Series[1]
	if l2.Name != "l2" || len(l2.Y) != 2 || l2.Y[0] > 1 || l2.Y[1] > 1 {
		t.Errorf("series %q: %v", l2.Name, l2.Y)
	}
}

// TestFig7Timing: seconds and ratios for each method and N; l2 over
// itself is exactly 1.
func TestFig7Timing(t *testing.T) {
	cfg := tiny()
	cfg.Sizes = []int{64, 128}
	figs, err := Fig7(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[1].ID != "fig7-ratio" {
		t.Fatalf("%d figures", len(figs))
	}
	for k, s := range figs[0].Series {
		r := figs[1].Series[k]
		for j := range s.Y {
			if !(s.Y[j] > 0) || !(r.Y[j] > 0) {
				t.Errorf("%s at N = %g: %g s, ratio %g", s.Name, s.X[j], s.Y[j], r.Y[j])
			}
			if s.Name == "l2" && r.Y[j] != 1 {
				t.Errorf("l2 / l2 = %g", r.Y[j])
			}
		}
	}
}

// bankConfig reads ../shared/data relative to the repository root, or
// skips the test when the data are absent.
func bankConfig(t *testing.T) Config {
	dir := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(dir, bank.file)); err != nil {
		t.Skipf("Bank data absent: %v", err)
	}
	cfg := tiny()
	cfg.DataDir, cfg.DataBins, cfg.Runs = dir, 256, 3
	cfg.Epsilons = []float64{1, 1 << 10} // at 2^10 the discrete noise is 0 with overwhelming probability
	return cfg
}

// TestFig5Bank: without noise (ε = 2^40) every smoothing returns the
// exact curve and the area error is 0 (up to rounding); at ε = 1 it is
// positive and below the whole unit square.
func TestFig5Bank(t *testing.T) {
	f, err := Fig5(context.Background(), bankConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Series) != len(rocVariants)*len(smoothingMethods) {
		t.Fatalf("%d series", len(f.Series))
	}
	for _, s := range f.Series {
		if !(s.Y[0] > 0 && s.Y[0] < 1) || s.Y[1] > 1e-9 {
			t.Errorf("%s: area errors %v, want in (0, 1) at ε = 1 and 0 without noise (ε = 2^10)", s.Name, s.Y)
		}
	}
}

// TestFig6Bank: one series per plan and mechanism; the relative MSE
// falls as 1/ε² for small noise (factor 10^6 from ε = 1 to 2^10, where
// the node noise is rarely more than one instance): it must fall by at
// least 10^3 and be below 10^-3 at ε = 2^10.
func TestFig6Bank(t *testing.T) {
	f, err := Fig6(context.Background(), bankConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Series) != 8 {
		t.Fatalf("%d series, want paper, joint, grid and grid debiased for tree and kary", len(f.Series))
	}
	for _, s := range f.Series {
		if len(s.Y) != 2 || s.Y[1] > 1e-3 || s.Y[1] > 1e-3*s.Y[0] {
			t.Errorf("%s: relative MSE %v at ε %v", s.Name, s.Y, s.X)
		}
	}
}

// TestRunSkipsMissingData: the real-data figures are skipped with a note
// naming the file when the data directory lacks it.
func TestRunSkipsMissingData(t *testing.T) {
	cfg := tiny()
	cfg.DataDir = t.TempDir()
	figs, err := Run(context.Background(), cfg, []string{"fig5", "fig10"})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || !figs[0].Skipped || !figs[1].Skipped || !strings.Contains(figs[1].Notes[0], "diabetic_data.csv") {
		t.Fatalf("figures %+v", figs)
	}
	if paths, err := figs[0].Save(t.TempDir()); err != nil || len(paths) != 0 {
		t.Errorf("skipped figure saved %v, %v", paths, err)
	}
}
