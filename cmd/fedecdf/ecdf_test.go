package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/dataset"
)

// runECDFCommand runs "fedecdf ecdf args…" in-process and returns its
// standard output and error streams.
func runECDFCommand(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newECDFCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// writeCSV writes a ';'-separated file with a quoted header and the
// values 1..n in column "age".
func writeCSV(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("\"id\";\"age\"\n")
	for i := 1; i <= n; i++ {
		b.WriteString(strings.Join([]string{strconv.Itoa(i), strconv.Itoa(i)}, ";") + "\n")
	}
	path := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type ecdfJSON struct {
	N          int64              `json:"n"`
	NPublic    *bool              `json:"n_public"`
	Epsilon    float64            `json:"epsilon"`
	Delta      *float64           `json:"delta"`
	Mechanism  string             `json:"mechanism"`
	Neighbours string             `json:"neighbours"`
	Thresholds []float64          `json:"thresholds"`
	ECDF       []float64          `json:"ecdf"`
	Smoothed   []float64          `json:"smoothed"`
	Quantiles  map[string]float64 `json:"quantiles"`
}

func TestECDFCommandJSON(t *testing.T) {
	path := writeCSV(t, 1000)
	out, _, err := runECDFCommand(t, "", "--input", path, "--column", "age", "--min", "0", "--max", "1000",
		"--bins", "100", "--epsilon", "2", "--format", "json", "--quantiles", "0.1,0.5,0.9")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"n", "n_public", "epsilon", "delta", "mechanism", "neighbours", "guarantee", "scale", "min", "max", "bins", "prefixes", "thresholds", "counts", "ecdf", "stddev", "smoothing", "smoothed", "quantiles"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	var r ecdfJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.N != 1000 || r.NPublic == nil || !*r.NPublic || r.Epsilon != 2 || r.Neighbours != "replace" || r.Mechanism != autoName(t, 100, 2) {
		t.Errorf("n, n_public, ε, neighbours, mechanism = %d, %v, %v, %q, %q", r.N, r.NPublic, r.Epsilon, r.Neighbours, r.Mechanism)
	}
	if len(r.Thresholds) != 100 || len(r.ECDF) != 100 || len(r.Smoothed) != 100 {
		t.Fatalf("lengths %d, %d, %d, want 100", len(r.Thresholds), len(r.ECDF), len(r.Smoothed))
	}
	if r.Thresholds[0] != 10 || r.Thresholds[99] != 1000 {
		t.Errorf("thresholds from %v to %v", r.Thresholds[0], r.Thresholds[99])
	}
	// Data 1..1000 on thresholds 10, 20, …: F(τ_i) = i/100 exactly; the
	// tree's noise at ε = 2 has std dev √(2·8³)/2 = 16 counts per prefix.
	sigma := math.Sqrt(2*8*8*8) / 2 / 1000
	for i, f := range r.ECDF {
		if want := float64(i+1) / 100; math.Abs(f-want) > 6*sigma {
			t.Errorf("F̂(τ_%d) = %v, want %v ± 6σ (σ = %v)", i+1, f, want, sigma)
		}
	}
	for i, f := range r.Smoothed {
		if f < 0 || f > 1 || (i > 0 && f < r.Smoothed[i-1]) {
			t.Fatalf("smoothed curve is not monotone in [0, 1] at %d: %v", i+1, r.Smoothed[max(i-1, 0):i+1])
		}
	}
	for key, want := range map[string]float64{"0.1": 100, "0.5": 500, "0.9": 900} {
		if q, ok := r.Quantiles[key]; !ok || math.Abs(q-want) > 10*math.Ceil(6*sigma*100) {
			t.Errorf("quantile %s = %v (present %v), want %v within the bins 6σ spans", key, q, ok, want)
		}
	}
}

func TestECDFCommandText(t *testing.T) {
	path := writeCSV(t, 500)
	out, _, err := runECDFCommand(t, "", "--input", path, "--column", "age", "--min", "0", "--max", "500", "--bins", "50")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n = 500 (public under replace neighbours)", "ε = 1", "replace neighbours", "mechanism " + autoName(t, 50, 1), "guarantee: (ε=1, δ=0)-DP", "50 linear bins over [0, 500]", "std dev", "p = 0.25", "p = 0.5", "p = 0.75"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "p = 0.25") > strings.Index(out, "p = 0.5 ") {
		t.Errorf("quantiles are not in increasing order of probability:\n%s", out)
	}
	// Ten rows follow the table header, up to the blank line.
	lines := strings.Split(out, "\n")
	header := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "threshold") && strings.Contains(l, "private") })
	if rows := slices.Index(lines[header:], "") - 1; header < 0 || rows != summaryRows {
		t.Errorf("table has %d rows, want %d:\n%s", rows, summaryRows, out)
	}
}

func TestSummaryIndices(t *testing.T) {
	cases := []struct {
		n, k int
		want []int
	}{
		{20, 10, []int{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}},
		{3, 10, []int{1, 2, 3}},
		{1, 10, []int{1}},
		{1024, 4, []int{256, 512, 768, 1024}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if got := summaryIndices(c.n, c.k); !slices.Equal(got, c.want) {
				t.Errorf("summaryIndices(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
			}
		})
	}
}

func TestECDFCommandErrors(t *testing.T) {
	path := writeCSV(t, 20)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("id,age\n1,30\n2,thirty\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"no domain", []string{"--input", path, "--column", "age"}, []string{"--min and --max are required", "leak"}},
		{"out of range", []string{"--input", path, "--column", "age", "--min", "0", "--max", "10"}, []string{path, "value 11 is above the grid maximum 10", "--clamp"}},
		{"bad row", []string{"--input", bad, "--column", "age", "--min", "0", "--max", "100"}, []string{bad + ":3", "age", "thirty"}},
		{"no column", []string{"--input", path, "--column", "height", "--min", "0", "--max", "100"}, []string{"height"}},
		{"bad scale", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--scale", "cubic"}, []string{"cubic"}},
		{"bad quantile", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--quantiles", "0.5,1.5"}, []string{"1.5"}},
		{"bad format", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--format", "xml"}, []string{"xml"}},
		{"bad neighbours", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--neighbours", "swap"}, []string{"--neighbours", "swap"}},
		{"cascade without delta", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--mechanism", "cascade"}, []string{"--delta"}},
		{"gaussian-tree without delta", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--mechanism", "gaussian-tree"}, []string{"--delta"}},
		{"bad epsilon", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--epsilon", "-1"}, []string{"-1"}},
		{"unknown mechanism", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--mechanism", "magic"}, []string{"magic"}},
		{"bad separator", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--sep", "|"}, []string{"--sep"}},
		{"bad smoothing", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--smooth", "l3"}, []string{"l3"}},
		{"log grid from 0", []string{"--input", path, "--column", "age", "--min", "0", "--max", "100", "--scale", "log"}, []string{"not positive"}},
	}
	for _, c := range cases {
		_, _, err := runECDFCommand(t, "", c.args...)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.name, err, w)
			}
		}
	}
}

func TestECDFCommandClamp(t *testing.T) {
	path := writeCSV(t, 20)
	out, stderr, err := runECDFCommand(t, "", "--input", path, "--column", "age", "--min", "0", "--max", "10", "--bins", "10", "--clamp", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "clamped 10 of 20 values") || !strings.Contains(stderr, "not differentially private") {
		t.Errorf("stderr %q does not report the 10 clamped values", stderr)
	}
	if strings.Contains(out, "clamped") {
		t.Error("the non-private clamp count leaked into the release")
	}
}

func TestECDFCommandStdin(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	out, _, err := runECDFCommand(t, b.String(), "--min", "1", "--max", "300", "--scale", "log", "--bins", "64", "--format", "json", "--smooth", "none")
	if err != nil {
		t.Fatal(err)
	}
	var r ecdfJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.N != 300 || len(r.ECDF) != 64 || r.Thresholds[63] != 300 {
		t.Errorf("n = %d, %d values, τ_N = %v", r.N, len(r.ECDF), r.Thresholds[63])
	}
	for i := range r.ECDF {
		if r.ECDF[i] != r.Smoothed[i] {
			t.Fatal("--smooth none changed the curve")
		}
	}
}

func TestECDFCommandPlot(t *testing.T) {
	path := writeCSV(t, 200)
	png := filepath.Join(t.TempDir(), "ecdf.png")
	if _, _, err := runECDFCommand(t, "", "--input", path, "--column", "age", "--min", "0", "--max", "200", "--bins", "40", "--plot", png); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Error("plot is not a PNG file")
	}
}

// TestECDFCommandBankAge runs the command of the README on the age column
// of the bank marketing data set (skipped when ../shared/data is absent)
// and checks each quantile is a crossing of the exact ECDF within 6σ of
// the release noise.
func TestECDFCommandBankAge(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "bank-full.csv")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("bank data set not available: %v", err)
	}
	out, _, err := runECDFCommand(t, "", "--input", path, "--column", "age", "--min", "18", "--max", "95",
		"--bins", "128", "--quantiles", "0.25,0.5,0.75", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var r ecdfJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.N != 45211 || len(r.ECDF) != 128 {
		t.Fatalf("n = %d, %d values; want 45211, 128", r.N, len(r.ECDF))
	}
	ages, err := dataset.ReadColumn(path, "age", 0)
	if err != nil {
		t.Fatal(err)
	}
	grid, _ := ecdf.NewLinearGrid(18, 95, 128)
	bins, _, _ := grid.BinAll(ages, false)
	hist, _ := ecdf.Histogram(bins, 128)
	exact := ecdf.ECDF(hist)
	sigma := math.Sqrt(2*8*8*8) / 45211 // tree, L = 7, ε = 1
	for key, q := range r.Quantiles {
		p := map[string]float64{"0.25": 0.25, "0.5": 0.5, "0.75": 0.75}[key]
		i, err := grid.Bin(q)
		if err != nil || grid.Threshold(i) != q {
			t.Fatalf("quantile %s = %v is not a threshold", key, q)
		}
		below := 0.0
		if i > 1 {
			below = exact[i-2]
		}
		if !(below-6*sigma < p && p <= exact[i-1]+6*sigma) {
			t.Errorf("quantile %s = %v: exact F there is (%v, %v], not a crossing of %v within 6σ", key, q, below, exact[i-1], p)
		}
	}
}

// TestECDFCommandAddRemove checks that under add/remove neighbours the
// release is normalised by the noisy total (n is private there), so the
// reported n is within 6σ of the true count and F̂(τ_N) = 1.
func TestECDFCommandAddRemove(t *testing.T) {
	path := writeCSV(t, 1000)
	out, _, err := runECDFCommand(t, "", "--input", path, "--column", "age", "--min", "0", "--max", "1000",
		"--bins", "100", "--neighbours", "addremove", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var r ecdfJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	// Tree under add/remove: L = 7, Δ = ⌈8/2⌉ = 4, prefix variance
	// 8·2·4² (continuous bound) at ε = 1.
	sigma := math.Sqrt(8 * 2 * 4 * 4)
	if r.Neighbours != "addremove" || math.Abs(float64(r.N)-1000) > 6*sigma || r.ECDF[99] != 1 || r.NPublic == nil || *r.NPublic {
		t.Errorf("neighbours %q, n = %d (want 1000 ± %v), F̂(τ_N) = %v, n_public %v (want false)", r.Neighbours, r.N, 6*sigma, r.ECDF[99], r.NPublic)
	}
	text, _, err := runECDFCommand(t, "", "--input", path, "--column", "age", "--min", "0", "--max", "1000",
		"--bins", "100", "--neighbours", "addremove")
	if err != nil || !strings.Contains(text, "(noisy total; n is private under addremove neighbours)") || !strings.Contains(text, "n ≈ ") {
		t.Errorf("text output under add/remove (%v) does not say n is a noisy total:\n%s", err, text)
	}
}

// autoName is the mechanism the default --mechanism auto picks.
func autoName(t *testing.T, bins int, epsilon float64) string {
	t.Helper()
	m, err := mechanism.New(mechanism.Params{Name: "auto", Bins: bins, Epsilon: epsilon})
	if err != nil {
		t.Fatal(err)
	}
	return m.Name()
}

// ecdf: a missing value is an error naming its line and the flag that
// skips it; --missing skip leaves it out and says how many.
func TestECDFCommandMissing(t *testing.T) {
	in := "x\n0.2\n?\n0.4\n\n0.6\nNA\n"
	_, _, err := runECDFCommand(t, in, "--column", "x", "--min", "0", "--max", "1", "--bins", "8")
	if err == nil || !strings.Contains(err.Error(), `stdin:3: column "x": missing value "?"`) || !strings.Contains(err.Error(), "--missing skip") {
		t.Errorf("default: %v, want the line and --missing skip", err)
	}
	_, stderr, err := runECDFCommand(t, in, "--column", "x", "--min", "0", "--max", "1", "--bins", "8", "--missing", "skip")
	if err != nil || !strings.Contains(stderr, "skipped 2 missing value(s); 3 values are released") {
		t.Errorf("--missing skip: %q, %v", stderr, err)
	}
	if _, _, err := runECDFCommand(t, in, "--column", "x", "--min", "0", "--max", "1", "--missing", "impute"); err == nil || !strings.Contains(err.Error(), `--missing "impute"`) {
		t.Errorf("--missing impute: %v", err)
	}
}

// ecdf without --input on a terminal says it reads stdin; not otherwise.
func TestECDFCommandStdinPrompt(t *testing.T) {
	const prompt = "reading numbers from stdin"
	if _, stderr, err := runECDFCommand(t, "0.5\n", "--min", "0", "--max", "1"); err != nil || strings.Contains(stderr, prompt) {
		t.Errorf("piped stdin: %q, %v", stderr, err)
	}
	defer func(f func(io.Reader) bool) { stdinIsTerminal = f }(stdinIsTerminal)
	stdinIsTerminal = func(io.Reader) bool { return true }
	if _, stderr, err := runECDFCommand(t, "0.5\n", "--min", "0", "--max", "1"); err != nil || !strings.Contains(stderr, prompt+", one per line (Ctrl-D to end)") {
		t.Errorf("terminal stdin: %q, %v", stderr, err)
	}
}
