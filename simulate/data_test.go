package simulate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fedecdf/fedecdf/internal/dataset"
)

// TestLoadDataSynthetic: the built-in path trains a logistic regression on
// the synthetic table and gives exactly n test-set probabilities whose AUC
// is the model's test AUC (about 0.8 by construction of dataset.Synthetic;
// the floor 0.7 is 5 Hanley–McNeil standard errors, ≈ 0.015 each at
// n = 1000 and 30% positives, below 0.8).
func TestLoadDataSynthetic(t *testing.T) {
	d, err := LoadData(Config{Parties: 1000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Scores) != 1000 || len(d.Labels) != 1000 || !d.Probabilities || d.Model == nil {
		t.Fatalf("%d scores, %d labels, probabilities %v, model %v", len(d.Scores), len(d.Labels), d.Probabilities, d.Model)
	}
	auc, err := dataset.AUC(d.Scores, d.Labels)
	if err != nil {
		t.Fatal(err)
	}
	if auc < 0.7 || d.Model.AUC < 0.7 {
		t.Errorf("AUC of the first 1000 test rows %.3f, model's test AUC %.3f: want about 0.8", auc, d.Model.AUC)
	}
	for k, s := range d.Scores {
		if !(s > 0 && s < 1) {
			t.Fatalf("score %d = %g is not a probability", k, s)
		}
	}
	again, _ := LoadData(Config{Parties: 1000, Seed: 3})
	if again.Scores[17] != d.Scores[17] {
		t.Error("same seed, different scores")
	}
}

// TestLoadDataFiles reads a score column as it is, and trains on a table
// written from the synthetic generator, dropping an identifier column.
func TestLoadDataFiles(t *testing.T) {
	dir := t.TempDir()
	scores := filepath.Join(dir, "scores.csv")
	if err := os.WriteFile(scores, []byte("s,y\n0.25,yes\n0.75,no\n0.5,yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadData(Config{Data: scores, ScoreCol: "s", LabelCol: "y", Positive: "yes", Min: 0, Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Scores) != 3 || d.Scores[1] != 0.75 || d.Labels[1] != 0 || d.Labels[2] != 1 || !d.Probabilities || d.Model != nil {
		t.Errorf("read %+v", d)
	}

	table := filepath.Join(dir, "table.csv")
	syn := dataset.Synthetic(400, 9)
	f, err := os.Create(table)
	if err != nil {
		t.Fatal(err)
	}
	fmtRow := func(id string, row []string) {
		f.WriteString(id)
		for _, v := range row {
			f.WriteString("," + v)
		}
		f.WriteString("\n")
	}
	fmtRow("id", syn.Columns)
	for i, row := range syn.Rows {
		fmtRow(string(rune('a'+i%26))+string(rune('a'+i/26%26)), row)
	}
	f.Close()
	d, err = LoadData(Config{Data: table, LabelCol: dataset.SyntheticLabel, Drop: []string{"id"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Scores) != 120 || d.Model == nil || d.Model.TrainRows != 280 {
		t.Fatalf("%d test scores, model %+v: want 120 of a 280/120 split", len(d.Scores), d.Model)
	}
	for _, c := range d.Model.Dropped {
		if c != "id" && c != dataset.SyntheticLabel {
			t.Errorf("dropped column %q", c)
		}
	}
	if _, err := LoadData(Config{Data: table, LabelCol: "nope"}); err == nil {
		t.Error("missing label column accepted")
	}
}
