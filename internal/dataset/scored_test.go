package dataset

import (
	"slices"
	"strings"
	"testing"
)

func TestReadScored(t *testing.T) {
	path := writeTemp(t, "scored.csv", "\"p\";\"y\";\"r\";\"s\"\n0.9;1;\"yes\";yes\n0.2;0;\"no\";no\n0.6; 1 ;\"NO\";no\n")
	for _, tc := range []struct {
		label, positive string
		want            []int
	}{
		{"y", "", []int{1, 0, 1}},
		{"s", "yes", []int{1, 0, 0}},
		{"s", "!yes", []int{0, 1, 1}},
		{"r", "!NO", []int{1, 1, 0}},
	} {
		scores, labels, err := ReadScored(path, "p", tc.label, tc.positive)
		if err != nil {
			t.Fatalf("label %q positive %q: %v", tc.label, tc.positive, err)
		}
		if !slices.Equal(scores, []float64{0.9, 0.2, 0.6}) || !slices.Equal(labels, tc.want) {
			t.Errorf("label %q positive %q: got %v %v, want labels %v", tc.label, tc.positive, scores, labels, tc.want)
		}
	}
}

func TestReadScoredErrors(t *testing.T) {
	for _, tc := range []struct {
		content, score, label, positive string
		want                            []string
	}{
		{"p,y\n0.5,1\n0.4,2\n", "p", "y", "", []string{"in.csv:3:", `column "y"`, `label "2" is not 0 or 1`}},
		{"p,y\n0.5,yes\n", "p", "y", "", []string{"in.csv:2:", `label "yes" is not 0 or 1`}},
		{"p,y\n0.5,1\nnan,0\n", "p", "y", "", []string{"in.csv:3:", `column "p"`, "not a finite number"}},
		{"p,y\n0.5,1\n", "q", "y", "", []string{`no column "q"`, `"p", "y"`}},
		{"p,y\n0.5,1\n", "p", "z", "", []string{`no column "z"`}},
		{"p,y\n", "p", "y", "", []string{"no data rows"}},
		// A misspelt positive value, a third value that would silently be
		// negative, and a "!v" that matches nothing: refused with the
		// values found and their counts.
		{"p,y\n0.5,yes\n0.4,no\n0.3,no\n", "p", "y", "Yes", []string{`label column "y" has 2 values, "yes" (1), "no" (2)`, `positive value "Yes" matches none of them`}},
		{"p,y\n0.5,yes\n0.4,no\n0.3,NO\n", "p", "y", "yes", []string{`3 values, "yes" (1), "no" (1), "NO" (1)`, `"!v"`}},
		{"p,y\n0.5,yes\n0.4,no\n", "p", "y", "!No", []string{`"!No"`, "every row would be positive"}},
	} {
		_, _, err := ReadScored(writeTemp(t, "in.csv", tc.content), tc.score, tc.label, tc.positive)
		if err == nil {
			t.Errorf("%q: no error", tc.content)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not contain %q", tc.content, err, w)
			}
		}
	}
}

// ReadScoredRows with skip leaves out whole rows missing any column used,
// so the score, label and extra column stay aligned, and counts them;
// without skip a missing score is an error as in ReadScored.
func TestReadScoredRowsSkipMissing(t *testing.T) {
	path := writeTemp(t, "rows.csv", "s,y,p\n0.1,0,0.15\n?,1,0.2\n0.3,NA,0.35\n0.4,1,\n0.5,1,0.55\n")
	rows, err := ReadScoredRows(path, "s", "y", "", "p", true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows.Scores, []float64{0.1, 0.5}) || !slices.Equal(rows.Labels, []int{0, 1}) ||
		!slices.Equal(rows.Extra, []float64{0.15, 0.55}) || !slices.Equal(rows.Lines, []int{2, 6}) || rows.Skipped != 3 {
		t.Errorf("got %+v, want rows of lines 2 and 6 aligned, 3 skipped", rows)
	}
	if _, err := ReadScoredRows(path, "s", "y", "", "p", false); err == nil || !strings.Contains(err.Error(), ":3:") {
		t.Errorf("without skip: %v, want an error at line 3", err)
	}
	noExtra, err := ReadScoredRows(path, "s", "y", "", "", true)
	if err != nil || noExtra.Extra != nil || noExtra.Skipped != 2 || !slices.Equal(noExtra.Lines, []int{2, 5, 6}) {
		t.Errorf("without the extra column: %+v, %v; want lines 2, 5, 6 and 2 skipped", noExtra, err)
	}
}
