package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCSVProbabilities(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte("score;label;p\n0.9;1;0.8\n0.2;0;0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := csvProbabilities(path, "p", 2); err != nil || !slices.Equal(got, []float64{0.8, 0.1}) {
		t.Errorf("csvProbabilities = %v, %v", got, err)
	}
	if got, err := csvProbabilities(path, "", 2); got != nil || err != nil {
		t.Errorf("no column: %v, %v", got, err)
	}
	if _, err := csvProbabilities(path, "q", 2); err == nil || !strings.Contains(err.Error(), `"q"`) {
		t.Errorf("missing column: %v", err)
	}
	if _, err := csvProbabilities(path, "p", 3); err == nil || !strings.Contains(err.Error(), "2 probabilities") {
		t.Errorf("count mismatch: %v", err)
	}
}
