package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/simulate"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every --bins tells the same story, and each its own default's reason.
func TestBinsHelpOneStory(t *testing.T) {
	story := binsUsage("")
	for name, cmd := range map[string]*cobra.Command{
		"audit": newAuditCommand(), "demo": newDemoCommand(), "ecdf": newECDFCommand(),
		"experiment": newExperimentCommand(), "manifest": newManifestCommand(), "simulate": newSimulateCommand(),
	} {
		f := cmd.Flags().Lookup("bins")
		if f == nil {
			t.Errorf("%s has no --bins", name)
			continue
		}
		if !strings.HasPrefix(f.Usage, story) || len(f.Usage) == len(story) {
			t.Errorf("%s --bins: %q, want the shared story and why its default", name, f.Usage)
		}
	}
}

// simulate --parties says what --input does to its default; --backend
// lists every backend, plain too, in its help and its error.
func TestSimulatePartiesAndBackendHelp(t *testing.T) {
	cmd := newSimulateCommand()
	if f := cmd.Flags().Lookup("parties"); !strings.Contains(f.Usage, "with --input, default: every row") {
		t.Errorf("--parties help %q does not say every row with --input", f.Usage)
	}
	_, err := runSimulate("--backend", "paillier")
	for _, want := range []string{`"paillier"`, "plain", "additive", "dcf"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--backend paillier: %v, want %s named", err, want)
		}
	}
}

// bench cost prints the cost table from simulate runs: a header, one
// row per (n, |B|), and neither backend's upload growing with |B|: both
// upload once, and no party is online for a query.
func TestBenchCost(t *testing.T) {
	out, err := runRoot("bench", "cost", "--parties", "40", "--prefixes", "2,16", "--bins", "16")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "| n | \\|B\\| | additive B/party") {
		t.Fatalf("table:\n%s", out)
	}
	cell := func(line, col int) string { return strings.TrimSpace(strings.Split(lines[line], "|")[col+1]) }
	if cell(2, 2) != cell(3, 2) || cell(2, 4) != cell(3, 4) {
		t.Errorf("additive B/party %s → %s and dcf %s → %s should not grow with |B|:\n%s", cell(2, 2), cell(3, 2), cell(2, 4), cell(3, 4), out)
	}
	if _, err := runRoot("bench", "cost", "--backends", "plain"); err == nil || !strings.Contains(err.Error(), `"plain"`) {
		t.Errorf("--backends plain: %v", err)
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// --interval-draws sets the Monte-Carlo draws of the intervals on
// ecdf, simulate and query: 0 leaves band95 and auc_ci95 out, the
// default draws them, and a negative B is refused.
func TestIntervalDrawsFlag(t *testing.T) {
	input := strings.Repeat("0.5\n", 40)
	for _, c := range []struct {
		draws string
		want  bool
	}{{"0", false}, {"1000", true}} {
		out, _, err := runECDFCommand(t, input, "--min", "0", "--max", "1", "--bins", "32", "--format", "json", "--interval-draws", c.draws)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out, `"band95"`); got != c.want {
			t.Errorf("ecdf --interval-draws %s: band95 printed %v", c.draws, got)
		}
		sim, err := runSimulate("--parties", "40", "--bins", "32", "--backend", "plain", "--format", "json", "--bootstrap", "-1", "--interval-draws", c.draws)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(sim, `"auc_ci95"`) && strings.Contains(sim, `"band95"`); got != c.want {
			t.Errorf("simulate --interval-draws %s: auc_ci95 and band95 printed %v", c.draws, got)
		}
	}
	if _, _, err := runECDFCommand(t, input, "--min", "0", "--max", "1", "--interval-draws", "-1"); err == nil || !strings.Contains(err.Error(), "--interval-draws") {
		t.Errorf("--interval-draws -1: %v", err)
	}
	for name, cmd := range map[string]*cobra.Command{"ecdf": newECDFCommand(), "simulate": newSimulateCommand(), "query": newQueryCommand()} {
		if f := cmd.Flags().Lookup("interval-draws"); f == nil || f.DefValue != strconv.Itoa(analysis.DefaultIntervalDraws) {
			t.Errorf("%s --interval-draws: %+v", name, f)
		}
	}
}

// quantiles_ci95 is the per-quantile ci95 = [lo, hi]: one interval for
// every key of quantiles, lo ≤ hi, and none without intervals.
func TestQuantilesCI95PerQuantile(t *testing.T) {
	input := strings.Repeat("0.2\n0.5\n0.7\n", 20)
	for _, draws := range []string{"1000", "0"} {
		out, _, err := runECDFCommand(t, input, "--min", "0", "--max", "1", "--bins", "32", "--format", "json", "--quantiles", "0.25,0.5,0.9", "--interval-draws", draws)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Quantiles     map[string]float64    `json:"quantiles"`
			QuantilesCI95 map[string][2]float64 `json:"quantiles_ci95"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			t.Fatal(err)
		}
		if len(e.Quantiles) != 3 {
			t.Fatalf("quantiles %v", e.Quantiles)
		}
		if draws == "0" {
			if len(e.QuantilesCI95) != 0 {
				t.Errorf("--interval-draws 0 printed quantiles_ci95 %v", e.QuantilesCI95)
			}
			continue
		}
		for p := range e.Quantiles {
			if ci, ok := e.QuantilesCI95[p]; !ok || ci[0] > ci[1] {
				t.Errorf("quantile %s: ci95 %v (present %v)", p, ci, ok)
			}
		}
		if len(e.QuantilesCI95) != len(e.Quantiles) {
			t.Errorf("quantiles_ci95 %v, quantiles %v: not the same keys", e.QuantilesCI95, e.Quantiles)
		}
	}
}

// One spelling per concept: no command has a former spelling
// (deprecatedFlags) as a current flag, and each former spelling is a
// hidden, deprecated alias that sets the current flag.
func TestOneFlagSpellingPerConcept(t *testing.T) {
	root := newRootCommand()
	old := map[string]bool{}
	for _, renames := range deprecatedFlags {
		for o, cur := range renames {
			if o != cur {
				old[o] = true
			}
		}
	}
	// Former spellings that remain current for another concept.
	otherConcept := map[string]string{
		"fedecdf experiment out": "a directory", "fedecdf query out": "a directory", "fedecdf simulate out": "a directory",
		"fedecdf bench fss probability": "a switch: verified reports carry the probability",
	}
	for _, c := range commands(root) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if old[f.Name] && f.Deprecated == "" && otherConcept[c.CommandPath()+" "+f.Name] == "" {
				t.Errorf("%s has --%s, a former spelling, as a current flag", c.CommandPath(), f.Name)
			}
		})
	}
	for name, renames := range deprecatedFlags {
		var cmd *cobra.Command // by name: a subcommand (bench trees) too
		for _, c := range commands(root) {
			if c.Name() == name {
				cmd = c
			}
		}
		if cmd == nil {
			t.Fatalf("no command %s", name)
		}
		for o, cur := range renames {
			t.Run(name+"_"+o, func(t *testing.T) {
				f := cmd.Flags().Lookup(o)
				if f == nil || f.Deprecated != "use --"+cur || !f.Hidden {
					t.Fatalf("--%s is not a hidden deprecated alias of --%s: %+v", o, cur, f)
				}
				sample := map[string]string{"string": "x.csv", "float64": "0.5", "int": "1"}[f.Value.Type()]
				if err := cmd.Flags().Set(o, sample); err != nil {
					t.Fatal(err)
				}
				if got := cmd.Flags().Lookup(cur).Value.String(); got != sample || !flagChanged(cmd, cur) {
					t.Errorf("--%s %s set --%s to %q (changed %v)", o, sample, cur, got, flagChanged(cmd, cur))
				}
			})
		}
	}
}

// The renamed flags run: simulate on a file by its new spellings gives
// what the old ones gave.
func TestSimulateNewAndOldSpellings(t *testing.T) {
	path := scoresCSV(t, 200, false)
	args := []string{"--parties", "200", "--epsilon", "4", "--bins", "32", "--interval-draws", "0", "--format", "json", "--bootstrap", "-1"}
	newOut, err := runSimulate(append(args, "--input", path, "--score-column", "score", "--label-column", "y", "--positive", "yes")...)
	if err != nil {
		t.Fatal(err)
	}
	oldOut, err := runSimulate(append(args, "--data", path, "--score", "score", "--label", "y", "--positive", "yes")...)
	if err != nil {
		t.Fatal(err)
	}
	notice, oldJSON, _ := strings.Cut(oldOut, "\n{")
	if !strings.Contains(notice, "Flag --data has been deprecated, use --input") {
		t.Errorf("no deprecation notice for --data: %q", notice)
	}
	oldOut = "{" + oldJSON
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal([]byte(newOut), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(oldOut), &b); err != nil {
		t.Fatal(err)
	}
	if a["true"] == nil || string(a["true"]) != string(b["true"]) || string(a["data"]) != string(b["data"]) {
		t.Errorf("new spellings read other data than the old ones:\n%.300s\n%.300s", a["true"], b["true"])
	}
}

// TestBinsDefaults (issue 28, item 7): the default --bins is the same
// (simulate's, which manifest shares) across the commands unless a
// command's help says why it differs from it.
func TestBinsDefaults(t *testing.T) {
	common := strconv.Itoa(simulate.DefaultConfig().Bins)
	seen := 0
	for _, c := range commands(newRootCommand()) {
		f := c.Flags().Lookup("bins")
		if f == nil {
			continue
		}
		seen++
		if f.DefValue == common || f.DefValue == "0" {
			continue
		}
		if want := "unlike the " + common + " of simulate and manifest"; !strings.Contains(f.Usage, want) {
			t.Errorf("%s --bins defaults to %s, not %s, and its help does not say why (%q): %q", c.CommandPath(), f.DefValue, common, want, f.Usage)
		}
	}
	if seen < 5 {
		t.Errorf("only %d commands have --bins", seen)
	}
}
