package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runSimulate runs "fedecdf simulate args…" in-process and returns its
// standard output.
func runSimulate(args ...string) (string, error) {
	return runCommand(newSimulateCommand(), args...)
}

// simulateJSON is the part of simulate's JSON output the tests read.
type simulateJSON struct {
	Parties    int     `json:"parties"`
	N          int64   `json:"n"`
	NPublic    *bool   `json:"n_public"`
	Neighbours string  `json:"neighbours"`
	Mechanism  string  `json:"mechanism"`
	Delta      float64 `json:"delta"`
	Budget     struct {
		Guarantees []string `json:"guarantees"`
	} `json:"budget"`
	ECDF struct {
		Private []float64 `json:"ecdf"`
	} `json:"ecdf"`
	ROC struct {
		Mechanism string `json:"mechanism"`
	} `json:"roc"`
}

// TestSimulateNeighboursAndDelta runs simulate with --neighbours and
// --delta: the relation and δ reach every release (its stated guarantee),
// the (ε, δ) mechanisms run given δ > 0, and the output says whether n is
// public — the number of parties under replace-one; under add/remove the
// noisy total the private ECDF is normalised by, so that F̂(τ_N) = 1. The
// ROC/PR release follows --mechanism (--roc-mechanism if given), auto
// becoming partitioned on 64 bins at ε = 1, not on 16 at ε = 8.
func TestSimulateNeighboursAndDelta(t *testing.T) {
	base := []string{"--parties", "400", "--bins", "16", "--backend", "plain", "--epsilon", "8"}
	for _, c := range []struct {
		name       string
		args       []string
		neighbours string
		mechanism  string
		delta      float64
		roc        string
	}{
		{"default", nil, "replace", "", 0, "kary("},
		{"default, 64 bins at ε = 1", []string{"--bins", "64", "--epsilon", "1"}, "replace", "", 0, "partitioned("},
		{"replace", []string{"--neighbours", "replace", "--mechanism", "tree"}, "replace", "tree", 0, "tree"},
		{"addremove", []string{"--neighbours", "addremove", "--mechanism", "kary"}, "addremove", "kary", 0, "kary"},
		{"addremove over the servers", []string{"--neighbours", "addremove", "--backend", "dcf"}, "addremove", "", 0, "kary("},
		{"cascade", []string{"--mechanism", "cascade", "--delta", "1e-6"}, "replace", "cascade", 1e-6, "cascade"},
		{"gaussian-tree, addremove", []string{"--mechanism", "gaussian-tree", "--delta", "1e-6", "--neighbours", "addremove"}, "addremove", "gaussian-tree", 1e-6, "gaussian-tree"},
		{"roc-mechanism", []string{"--mechanism", "tree", "--roc-mechanism", "partitioned"}, "replace", "tree", 0, "partitioned("},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runSimulate(append(append(append([]string{}, base...), c.args...), "--format", "json")...)
			if err != nil {
				t.Fatal(err)
			}
			var r simulateJSON
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("JSON output: %v\n%s", err, out)
			}
			public := c.neighbours == "replace"
			if r.Neighbours != c.neighbours || r.NPublic == nil || *r.NPublic != public || r.Delta != c.delta || !strings.HasPrefix(r.Mechanism, c.mechanism) {
				t.Errorf("neighbours %q, n_public %v, δ %g, mechanism %q; want %q, %v, %g, %q", r.Neighbours, r.NPublic, r.Delta, r.Mechanism, c.neighbours, public, c.delta, c.mechanism)
			}
			if !strings.HasPrefix(r.ROC.Mechanism, c.roc) {
				t.Errorf("ROC/PR release by %q, want %q…", r.ROC.Mechanism, c.roc)
			}
			for _, g := range r.Budget.Guarantees {
				if !strings.Contains(g, "under "+c.neighbours+" neighbours") && !strings.Contains(g, "Hosmer–Lemeshow, roc allocation") {
					t.Errorf("guarantee %q is not under %s neighbours", g, c.neighbours)
				}
			}
			last := r.ECDF.Private[len(r.ECDF.Private)-1]
			if public && (r.N != int64(r.Parties) || r.Parties != 400) || !public && last != 1 {
				t.Errorf("n = %d of %d parties, F̂(τ_N) = %v: want n = 400 (replace-one) or F̂(τ_N) = 1 (add/remove)", r.N, r.Parties, last)
			}
			text, err := runSimulate(append(append([]string{}, base...), c.args...)...)
			want := map[bool]string{true: "n = 400 (public under replace neighbours)", false: "(noisy total; n is private under addremove neighbours)"}[public]
			if err != nil || !strings.Contains(text, want) {
				t.Errorf("text output (%v) lacks %q:\n%s", err, want, text)
			}
		})
	}
}

// TestSimulateFlagErrors: bad flags are refused, naming the flag to fix,
// before anything runs.
func TestSimulateFlagErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"cascade without delta", []string{"--mechanism", "cascade"}, []string{"--delta", "cascade"}},
		{"gaussian-tree without delta", []string{"--mechanism", "gaussian-tree"}, []string{"--delta", "gaussian-tree"}},
		{"delta out of range", []string{"--mechanism", "cascade", "--delta", "1"}, []string{"delta 1"}},
		{"unknown relation", []string{"--neighbours", "swap"}, []string{"--neighbours", "swap"}},
		{"partitioned with delta", []string{"--roc-mechanism", "partitioned", "--delta", "1e-6"}, []string{"--roc-mechanism", "pure ε-DP"}},
		{"own Hosmer releases under add/remove", []string{"--neighbours", "addremove", "--hosmer-plans", "roc,grid", "--hosmer-share", "0.25"}, []string{"replace neighbours", "grid"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runSimulate(append([]string{"--parties", "50", "--bins", "16", "--backend", "plain"}, c.args...)...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// TestBenchAccuracyNeighboursFlag: bench accuracy spells the relation
// --neighbours, like every command, and refuses a bad value before any
// measurement.
func TestBenchAccuracyNeighboursFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "accuracy", "--neighbours", "swap"}, "--neighbours"},
		{[]string{"bench", "accuracy", "--relation", "replace"}, "unknown flag: --relation"},
		{[]string{"bench", "accuracy", "--alpha", "0,1.5"}, "--alpha 1.5"},
		{[]string{"bench", "accuracy", "--alpha", "-0.1"}, "--alpha -0.1"},
	} {
		t.Run(strings.Join(c.args[2:], " "), func(t *testing.T) {
			if _, err := runCommand(newRootCommand(), c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: error %v, want it to name %q", c.args, err, c.want)
			}
		})
	}
}

// writeFile writes content to name in a temporary directory and returns
// its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// scoresCSV is a file of n scores with a yes/no label column "y" and a
// third value "maybe" in every seventh row of column "z".
func scoresCSV(t *testing.T, n int, allPositive bool) string {
	var b strings.Builder
	b.WriteString("score,y,z\n")
	for i := range n {
		s := (float64(i) + 0.5) / float64(n)
		y, z := "no", "no"
		if allPositive || (i*7919)%n < int(s*float64(n)) {
			y, z = "yes", "yes"
		}
		if i%7 == 0 {
			z = "maybe"
		}
		fmt.Fprintf(&b, "%g,%s,%s\n", s, y, z)
	}
	return writeFile(t, "scores.csv", b.String())
}

// TestSimulateSmoothNoneAreaError (item 4): without smoothing, the area
// error is that of the raw curve — a non-negative number (above 1 when
// the noisy curve leaves the unit square), never −1 — in the text and the
// JSON output.
func TestSimulateSmoothNoneAreaError(t *testing.T) {
	args := []string{"--parties", "300", "--bins", "32", "--backend", "plain", "--epsilon", "0.5", "--smooth", "none"}
	out, err := runSimulate(append(args, "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Error struct {
			ROCArea *float64 `json:"roc_area"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error.ROCArea == nil || !(*r.Error.ROCArea >= 0 && !math.IsInf(*r.Error.ROCArea, 0)) {
		t.Errorf("roc_area %v under --smooth none: want the raw curve's area error, ≥ 0", r.Error.ROCArea)
	}
	text, err := runSimulate(args...)
	if err != nil || !strings.Contains(text, "area between true and raw curves") || strings.Contains(text, "-1.0000") {
		t.Errorf("text (%v) lacks the raw curve's area error:\n%s", err, text)
	}
}

// TestSimulateLabelValues (item 5): a misspelt positive value, a third
// label value and one-class data are refused before any release, naming
// the values found and how many of each.
func TestSimulateLabelValues(t *testing.T) {
	mixed, positive := scoresCSV(t, 200, false), scoresCSV(t, 200, true)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"misspelt", []string{"--input", mixed, "--label-column", "y", "--positive", "Yes"}, []string{`label column "y" has 2 values`, `"yes" (`, `"no" (`, `"Yes" matches none`}},
		{"third value", []string{"--input", mixed, "--label-column", "z", "--positive", "yes"}, []string{`label column "z" has 3 values`, `"maybe" (29)`, `"!v"`}},
		{"all positive", []string{"--input", positive, "--label-column", "y", "--positive", "yes"}, []string{"all 200 instances are positive", `label "yes"`, "both classes"}},
		{"all negative", []string{"--input", positive, "--label-column", "y", "--positive", "no"}, []string{"all 200 instances are negative", `label "no"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runSimulate(append([]string{"--score-column", "score", "--bins", "16", "--backend", "plain"}, c.args...)...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := runSimulate("--input", mixed, "--score-column", "score", "--label-column", "y", "--positive", "yes", "--bins", "16", "--backend", "plain"); err != nil {
		t.Errorf("the right positive value: %v", err)
	}
}

// TestSimulateHosmerUndefined (item 8): when Hosmer–Lemeshow is undefined
// on the data (too few parties for 10 groups, or one bin), simulate says
// why and reports everything else, in text and JSON.
func TestSimulateHosmerUndefined(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		why  string
	}{
		{"5 parties", []string{"--parties", "5"}, "5 parties are too few for 10 groups"},
		{"1 bin", []string{"--parties", "200", "--bins", "1"}, "needs at least 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--backend", "plain", "--bins", "16"}, c.args...)
			text, err := runSimulate(args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, "undefined: ") || !strings.Contains(text, c.why) || !strings.Contains(text, "ROC  ") {
				t.Errorf("text does not say why Hosmer–Lemeshow is undefined (%q) or lacks the ROC line:\n%s", c.why, text)
			}
			out, err := runSimulate(append(args, "--format", "json")...)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Hosmer struct {
					Undefined     string   `json:"undefined"`
					StatisticTrue *float64 `json:"statistic_true"`
				} `json:"hosmer"`
				ROC struct {
					AUC *float64 `json:"auc"`
				} `json:"roc"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.Hosmer.Undefined, c.why) || r.Hosmer.StatisticTrue != nil || r.ROC.AUC == nil {
				t.Errorf("hosmer.undefined %q, statistic_true %v, roc.auc %v", r.Hosmer.Undefined, r.Hosmer.StatisticTrue, r.ROC.AUC)
			}
		})
	}
}

// TestSimulatePartiesAboveRows (item 13): more parties than the data has
// rows is refused, naming how many there are.
func TestSimulatePartiesAboveRows(t *testing.T) {
	path := scoresCSV(t, 200, false)
	_, err := runSimulate("--input", path, "--score-column", "score", "--label-column", "y", "--positive", "yes", "--parties", "500", "--bins", "16", "--backend", "plain")
	if err == nil || !strings.Contains(err.Error(), "500 parties asked for") || !strings.Contains(err.Error(), "only 200 rows") {
		t.Errorf("error %v: want a refusal naming the 200 rows available", err)
	}
}

// TestSimulateEpsilonPrinting (item 12): ε split into shares prints with
// six significant digits (0.1, not 0.09999999999999999).
func TestSimulateEpsilonPrinting(t *testing.T) {
	text, err := runSimulate("--parties", "200", "--bins", "16", "--backend", "plain", "--epsilon", "0.4")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "ECDF of scores 0.1; ROC/PR 0.3 ") || strings.Contains(text, "0000000") || strings.Contains(text, "9999999") {
		t.Errorf("ε printed at full float precision:\n%s", text)
	}
}

// TestSimulateDeltaTotal (issue 28, item 7): --epsilon is the run's
// total while --delta is per release and privacy unit; the output says
// so and prints the total δ spent, 2·--delta for cascade's ECDF and
// ROC/PR releases, in the privacy line and in budget.delta.
func TestSimulateDeltaTotal(t *testing.T) {
	args := []string{"--parties", "300", "--bins", "32", "--backend", "plain", "--mechanism", "cascade", "--delta", "1e-6", "--bootstrap", "-1"}
	out, err := runSimulate(append(args, "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Delta  float64 `json:"delta"`
		Budget struct {
			Delta float64 `json:"delta"`
		} `json:"budget"`
		Guarantee string `json:"guarantee"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Budget.Delta-2e-6) > 1e-15 || r.Delta != 1e-6 {
		t.Errorf("budget.delta %g, delta %g: want the total 2e-06 and the per-release 1e-06", r.Budget.Delta, r.Delta)
	}
	for _, want := range []string{"δ spent in all 2e-06 = ECDF 1e-06 + ROC/PR 1e-06", "per release and privacy unit, not a total"} {
		if !strings.Contains(r.Guarantee, want) {
			t.Errorf("guarantee %q lacks %q", r.Guarantee, want)
		}
	}
	text, err := runSimulate(args...)
	if err != nil || !strings.Contains(text, "δ spent in all 2e-06") {
		t.Errorf("text output (%v) does not print the total δ:\n%s", err, text)
	}
	help := newSimulateCommand().Flags()
	if u := help.Lookup("delta").Usage; !strings.Contains(u, "not a total") {
		t.Errorf("--delta help %q does not say it is not a total", u)
	}
	if u := help.Lookup("epsilon").Usage; !strings.Contains(u, "total") {
		t.Errorf("--epsilon help %q does not say it is the total", u)
	}
}

// TestSimulateMissingSkip (issue 28, item 8): --missing skip leaves out
// the rows of --input missing their score or label, whole, and says how
// many; without it such a row is an error, and without --score-column
// --missing skip is refused.
func TestSimulateMissingSkip(t *testing.T) {
	var b strings.Builder
	b.WriteString("score,y\n")
	for i := range 300 {
		s, y := fmt.Sprint(float64(i%97)/100), fmt.Sprint(i%3%2)
		switch i % 50 {
		case 7:
			s = "NA"
		case 8:
			y = "?"
		}
		fmt.Fprintf(&b, "%s,%s\n", s, y)
	}
	path := writeFile(t, "missing.csv", b.String())
	args := []string{"--input", path, "--score-column", "score", "--label-column", "y", "--bins", "32", "--backend", "plain", "--bootstrap", "-1", "--interval-draws", "0"}
	out, err := runSimulate(append(args, "--missing", "skip", "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Parties int `json:"parties"`
		Data    struct {
			Source string `json:"source"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Parties != 288 || !strings.Contains(r.Data.Source, "12 row(s) with a missing score or label skipped, 288 kept") {
		t.Errorf("parties %d, data %q: want 288 parties and the 12 skipped rows counted", r.Parties, r.Data.Source)
	}
	if _, err := runSimulate(args...); err == nil || !strings.Contains(err.Error(), ":9:") {
		t.Errorf("without --missing skip: %v, want an error at line 9", err)
	}
	if _, err := runSimulate("--missing", "skip", "--bins", "32", "--backend", "plain"); err == nil || !strings.Contains(err.Error(), "--score-column") {
		t.Errorf("--missing skip without --score-column: %v, want it refused", err)
	}
}
