package dataset

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// sharedData returns the path of a file in ../shared/data relative to the
// repository root (this package's parent), skipping the test when it is
// absent, as on a fresh clone.
func sharedData(t *testing.T, file string) string {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "data", file)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real data set not available: %v", err)
	}
	return path
}

// hanleyMcNeilSE is the standard error of an AUC estimate from n₊
// positives and n₋ negatives (Hanley & McNeil 1982, Eq. 2).
func hanleyMcNeilSE(auc float64, labels []int) float64 {
	var p float64
	for _, y := range labels {
		p += float64(y)
	}
	n := float64(len(labels)) - p
	q1, q2 := auc/(2-auc), 2*auc*auc/(1+auc)
	return math.Sqrt((auc*(1-auc) + (p-1)*(q1-auc*auc) + (n-1)*(q2-auc*auc)) / (p * n))
}

// checkRealData reads file, scores it and checks the split sizes, the
// positive fraction against the data README, and that the test AUC is not
// below minAUC by more than 5 standard errors.
func checkRealData(t *testing.T, file, label, positive string, drop []string, positives int, minAUC float64) {
	table, err := ReadTable(sharedData(t, file), 0)
	if err != nil {
		t.Fatal(err)
	}
	var count int
	rule := newLabelRule(positive)
	j, err := table.column(label)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range table.Rows {
		y, _ := rule.label(row[j])
		count += y
	}
	if count != positives {
		t.Errorf("%s: %d positives, the data README says %d", file, count, positives)
	}
	s, err := ScoreTable(table, label, positive, SplitOptions{Seed: 1, Drop: drop})
	if err != nil {
		t.Fatal(err)
	}
	if s.TestSize != int(math.Ceil(0.3*float64(len(table.Rows)))) || s.TrainSize+s.TestSize != len(table.Rows) {
		t.Errorf("split %d/%d of %d rows", s.TrainSize, s.TestSize, len(table.Rows))
	}
	se := hanleyMcNeilSE(s.AUC, s.Labels)
	t.Logf("%s: %d features, dropped %v; %d iterations; test AUC %.4f (se %.4f), accuracy %.4f on %d rows",
		file, s.Encoder.Dim(), s.Encoder.Dropped, s.Model.Iterations, s.AUC, se, s.Accuracy, s.TestSize)
	if s.AUC < minAUC-5*se {
		t.Errorf("%s: test AUC %.4f, want at least %.2f − 5·%.4f", file, s.AUC, minAUC, se)
	}
}

func TestBankFull(t *testing.T) {
	// Bank-full: 5,289 of 45,211 clients subscribed (y = "yes").
	// scikit-learn's logistic regression on one-hot, standardised features
	// reaches a test AUC of about 0.9 on this set.
	checkRealData(t, "bank-full.csv", "y", "yes", nil, 5289, 0.9)
}

func TestDiabetes(t *testing.T) {
	// Diabetes: the paper's positive fraction 0.460 (Table 1) is
	// readmitted ≠ "NO": 11,357 + 35,545 = 46,902 of 101,766. Readmission
	// is hard to predict from these features; linear models are reported
	// with AUCs in the mid 0.6s, so 0.64 is a floor against a broken
	// encoding (a model on the intercept alone has AUC 0.5).
	checkRealData(t, "diabetic_data.csv", "readmitted", "!NO", []string{"encounter_id", "patient_nbr"}, 46902, 0.64)
}
