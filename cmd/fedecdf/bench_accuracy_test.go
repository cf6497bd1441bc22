package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/bench"
)

// TestWriteAccuracyAlpha checks that the text table has a column group
// per α, marks the exact values, and is left out without α.
func TestWriteAccuracyAlpha(t *testing.T) {
	cfg := bench.AccuracyConfig{Bins: []int{16}, Epsilons: []float64{1}, Delta: 1e-6,
		Mechanisms: []string{"tree", "gaussian-tree"}, Runs: 3, Seed: 1}
	for _, alphas := range [][]float64{nil, {0, 0.1, 0.5}} {
		cfg.Alphas = alphas
		rows, err := bench.Accuracy(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := writeAccuracyText(&b, rows, mechanism.ReplaceOne); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		has := strings.Contains(out, "α=0.1 node") && strings.Contains(out, "α=0.5 node") && strings.Contains(out, "α=0 node")
		if has != (alphas != nil) || (alphas != nil && !strings.Contains(out, "*")) {
			t.Errorf("alphas %v: table\n%s", alphas, out)
		}
	}
}

// TestParseAlphas checks --alpha: a list in [0, 1), none for "".
func TestParseAlphas(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []float64
		ok   bool
	}{
		{"", nil, true}, {" ", nil, true}, {"0,0.1, 0.5", []float64{0, 0.1, 0.5}, true},
		{"1", nil, false}, {"-0.1", nil, false}, {"x", nil, false}, {"0.1,", nil, false},
	} {
		got, err := parseAlphas(c.in)
		if (err == nil) != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("parseAlphas(%q) = %v, %v", c.in, got, err)
		}
	}
}
