package experiment

import (
	"context"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// HLSimulate runs simulate.Run on calibrated files: one point per size
// and test, rates in [0, 1], and B taken from simulate's default.
func TestHLSimulateShape(t *testing.T) {
	fig, err := HLSimulate(context.Background(), Config{Runs: 1, Seed: 3, HLSizes: []int{300}})
	if err != nil {
		t.Fatal(err)
	}
	if fig.ID != "hl-simulate" || len(fig.Series) != len(hlTests) {
		t.Fatalf("figure %s with %d series", fig.ID, len(fig.Series))
	}
	for _, s := range fig.Series {
		if len(s.X) != 1 || s.X[0] != 300 || s.Y[0] < 0 || s.Y[0] > 1 {
			t.Errorf("%s: x %v, y %v", s.Name, s.X, s.Y)
		}
	}
}

// writeCalibrated's labels are Bernoulli(p): their sum is within 4
// standard deviations √Σp(1−p) of Σp, and the scores are written as
// they are.
func TestWriteCalibrated(t *testing.T) {
	probs := make([]float64, 4000)
	var mean, variance float64
	for k := range probs {
		probs[k] = float64(k%100) / 100
		mean += probs[k]
		variance += probs[k] * (1 - probs[k])
	}
	path := filepath.Join(t.TempDir(), "c.csv")
	if err := writeCalibrated(path, probs, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != len(probs)+1 || rows[0][0] != "score" || rows[0][1] != "label" {
		t.Fatalf("%d rows, header %v: %v", len(rows), rows[0], err)
	}
	var sum float64
	for k, r := range rows[1:] {
		if p, _ := strconv.ParseFloat(r[0], 64); p != probs[k] || (r[1] != "0" && r[1] != "1") || (p == 0 && r[1] == "1") {
			t.Fatalf("row %d: %v", k+1, r)
		}
		sum += float64(r[1][0] - '0')
	}
	if math.Abs(sum-mean) > 4*math.Sqrt(variance) {
		t.Errorf("%v positives, want %v ± %.1f", sum, mean, 4*math.Sqrt(variance))
	}
}
