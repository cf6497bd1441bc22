package dataset

import (
	"math"
	"slices"
	"strings"
	"testing"
)

const smallCSV = `"id";"age";"job";"y"
1;30;"admin";"no"
2; ? ;"tech";"yes"
3;50;"?";"no"
4;40;"admin";"yes"
5;NA;"chef";"no"
`

func TestReadTable(t *testing.T) {
	table, err := ReadTable(writeTemp(t, "small.csv", smallCSV), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(table.Columns, []string{"id", "age", "job", "y"}) || len(table.Rows) != 5 {
		t.Fatalf("columns %q, %d rows", table.Columns, len(table.Rows))
	}
	if got := table.Rows[1]; !slices.Equal(got, []string{"2", "?", "tech", "yes"}) {
		t.Errorf("row 1 = %q (fields must be trimmed)", got)
	}
	if !table.isNumericColumn(1) || table.isNumericColumn(2) {
		t.Error("age must be numeric and job categorical")
	}
	if _, err := table.column("salary"); err == nil || !strings.Contains(err.Error(), `"id", "age", "job", "y"`) {
		t.Errorf("missing column: %v", err)
	}
	for content, want := range map[string]string{
		"":                "empty input",
		"a,b\n":           "no data rows",
		"a,b\n1,2\n3\n":   "bad.csv:3:",
		"a,b\n1,\"2\n3\n": "bad.csv:2:",
		"a,b\n1,2\"x\n":   "bad.csv:2:",
	} {
		if _, err := ReadTable(writeTemp(t, "bad.csv", content), 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadTable(%q): error %v, want %q", content, err, want)
		}
	}
}

func TestEncoder(t *testing.T) {
	table, err := ReadTable(writeTemp(t, "small.csv", smallCSV), 0)
	if err != nil {
		t.Fatal(err)
	}
	train := []int{0, 1, 2, 3} // row 4 ("chef", age NA) is the test row
	enc, err := fitEncoder(table, train, encoderOptions{Label: "y", Drop: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"age", "age=<missing>", "job=admin", "job=tech", "job=<missing>"}
	if !slices.Equal(enc.Names(), wantNames) {
		t.Errorf("names %q, want %q", enc.Names(), wantNames)
	}
	wantDropped := []DroppedColumn{{"id", "dropped as requested"}, {"y", "label"}}
	if !slices.Equal(enc.Dropped, wantDropped) {
		t.Errorf("dropped %v, want %v", enc.Dropped, wantDropped)
	}
	// Training ages 30, 50, 40: mean 40, population std √(200/3).
	std := math.Sqrt(200.0 / 3)
	for _, tc := range []struct {
		row  int
		want []float64
	}{
		{0, []float64{-10 / std, 0, 1, 0, 0}},
		{1, []float64{0, 1, 0, 1, 0}}, // age missing: mean, indicator
		{2, []float64{10 / std, 0, 0, 0, 1}},
		{4, []float64{0, 1, 0, 0, 0}}, // "chef" unseen in training: zeros
	} {
		got, err := enc.encode(table.Rows[tc.row], nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range got {
			if math.Abs(got[k]-tc.want[k]) > 1e-12 {
				t.Errorf("row %d: %v, want %v", tc.row, got, tc.want)
				break
			}
		}
	}
	if _, err := enc.encode([]string{"6", "old", "admin", "no"}, nil); err == nil || !strings.Contains(err.Error(), `"old" is not a number`) {
		t.Errorf("text in a numeric column: error %v", err)
	}
	if _, err := fitEncoder(table, train, encoderOptions{Drop: []string{"ID"}}); err == nil || !strings.Contains(err.Error(), `no column "ID"`) {
		t.Errorf("dropping an unknown column: error %v", err)
	}
}

func TestEncoderDropsUninformativeColumns(t *testing.T) {
	table := &Table{Name: "gen", Columns: []string{"code", "const", "one", "gone", "x"}}
	for i := range 12 {
		table.Rows = append(table.Rows, []string{"c" + string(rune('a'+i)), "7", "k", "?", []string{"1", "2", "3"}[i%3]})
	}
	enc, err := fitEncoder(table, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, encoderOptions{MaxLevels: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []DroppedColumn{
		{"code", "more than 10 distinct values in the training rows"},
		{"const", "constant in the training rows"},
		{"one", "a single value in the training rows"},
		{"gone", "a single value in the training rows"}, // all missing: categorical
	}
	if !slices.Equal(enc.Dropped, want) || !slices.Equal(enc.Names(), []string{"x"}) {
		t.Errorf("dropped %v, features %q", enc.Dropped, enc.Names())
	}
}

func TestSplit(t *testing.T) {
	train, test, err := split(10, 0.3, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(test) != 3 || len(train) != 7 {
		t.Fatalf("split %v / %v", train, test)
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(train), test...)))
	for i, v := range all {
		if v != i {
			t.Fatalf("split %v / %v is not a partition of 0..9", train, test)
		}
	}
	train2, test2, _ := split(10, 0.3, 7)
	if !slices.Equal(test, test2) || !slices.Equal(train, train2) {
		t.Error("same seed, different split")
	}
	for _, tc := range []struct {
		n int
		f float64
	}{{10, 0}, {10, 1}, {10, math.NaN()}, {1, 0.5}, {0, 0.3}} {
		if _, _, err := split(tc.n, tc.f, 1); err == nil {
			t.Errorf("Split(%d, %v): no error", tc.n, tc.f)
		}
	}
}

func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		scores []float64
		labels []int
		want   float64
	}{
		{[]float64{0.1, 0.4, 0.35, 0.8}, []int{0, 0, 1, 1}, 0.75},
		{[]float64{1, 2, 3}, []int{1, 0, 0}, 0},
		{[]float64{0.5, 0.5, 0.5, 0.5}, []int{0, 1, 0, 1}, 0.5},
		{[]float64{0.2, 0.5, 0.5, 0.9}, []int{0, 1, 0, 1}, 0.875},
	} {
		got, err := AUC(tc.scores, tc.labels)
		if err != nil || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("AUC(%v, %v) = %v, %v; want %v", tc.scores, tc.labels, got, err, tc.want)
		}
	}
	// Against the O(n₊·n₋) definition on random scores with many ties.
	table := Synthetic(500, 3)
	scores := make([]float64, len(table.Rows))
	labels := make([]int, len(table.Rows))
	for i, row := range table.Rows {
		scores[i] = math.Round(syntheticLogit(row) * 4)
		labels[i] = int(row[5][0] - '0')
	}
	var pairs, wins float64
	for i := range scores {
		for j := range scores {
			if labels[i] == 1 && labels[j] == 0 {
				pairs++
				switch {
				case scores[i] > scores[j]:
					wins++
				case scores[i] == scores[j]:
					wins += 0.5
				}
			}
		}
	}
	if got, _ := AUC(scores, labels); math.Abs(got-wins/pairs) > 1e-12 {
		t.Errorf("AUC %v, pairwise count %v", got, wins/pairs)
	}
	for _, tc := range []struct {
		scores []float64
		labels []int
	}{{[]float64{1}, []int{0, 1}}, {[]float64{1, 2}, []int{1, 1}}, {[]float64{1, math.NaN()}, []int{0, 1}}, {[]float64{1, 2}, []int{0, 3}}} {
		if _, err := AUC(tc.scores, tc.labels); err == nil {
			t.Errorf("AUC(%v, %v): no error", tc.scores, tc.labels)
		}
	}
}

func TestScoreTableSynthetic(t *testing.T) {
	table := Synthetic(20000, 1)
	s, err := ScoreTable(table, SyntheticLabel, "", SplitOptions{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s.TrainSize != 14000 || s.TestSize != 6000 || len(s.Scores) != 6000 || len(s.Labels) != 6000 {
		t.Fatalf("sizes %d/%d, %d scores", s.TrainSize, s.TestSize, len(s.Scores))
	}
	// The Bayes-optimal scores on the same test rows: the model is well
	// specified, so the fitted scores differ from them only by estimation
	// error, which costs O(d/n_train) ≈ 1e-3 in AUC (d = 12 features);
	// 0.01 is ten times that, far below the 0.3 an unfitted model loses.
	truth := make([]float64, len(s.TestRows))
	for k, i := range s.TestRows {
		truth[k] = syntheticLogit(table.Rows[i])
	}
	bayes, err := AUC(truth, s.Labels)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("test AUC %.4f, Bayes-optimal %.4f, accuracy %.4f", s.AUC, bayes, s.Accuracy)
	if math.Abs(s.AUC-bayes) > 0.01 {
		t.Errorf("fitted AUC %.4f, Bayes-optimal %.4f", s.AUC, bayes)
	}
	// The generator promises an AUC of about 0.8 (± 5 Hanley–McNeil
	// standard errors, ≈ 0.03).
	if se := hanleyMcNeilSE(bayes, s.Labels); math.Abs(bayes-0.8) > 5*se+0.02 {
		t.Errorf("Bayes-optimal AUC %.4f, want about 0.8 (se %.4f)", bayes, se)
	}
	if _, err := ScoreTable(table, SyntheticLabel, "", SplitOptions{TestFraction: 1.5}); err == nil {
		t.Error("test fraction 1.5: no error")
	}
	if _, err := ScoreTable(table, "plan", "", SplitOptions{}); err == nil || !strings.Contains(err.Error(), "synthetic row 1") {
		t.Errorf("non-0/1 label: error %v, want one naming the row", err)
	}
}

func TestSyntheticIsDeterministic(t *testing.T) {
	a, b, c := Synthetic(100, 5), Synthetic(100, 5), Synthetic(100, 6)
	same := func(x, y *Table) bool {
		return slices.EqualFunc(x.Rows, y.Rows, func(r, s []string) bool { return slices.Equal(r, s) })
	}
	if !same(a, b) || same(a, c) {
		t.Error("Synthetic must depend on the seed only")
	}
	var missingIncome, missingPlan int
	for _, row := range Synthetic(20000, 1).Rows {
		if isMissing(row[1]) {
			missingIncome++
		}
		if isMissing(row[4]) {
			missingPlan++
		}
	}
	// Binomial(20000, p): 5 standard deviations are ≈ 190 (p = 0.08) and
	// ≈ 155 (p = 0.05).
	if math.Abs(float64(missingIncome)-1600) > 190 || math.Abs(float64(missingPlan)-1000) > 155 {
		t.Errorf("%d missing incomes, %d missing plans; want about 1600 and 1000", missingIncome, missingPlan)
	}
}
