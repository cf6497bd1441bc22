package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTemp writes content to a file named name in a fresh temporary
// directory and returns its path.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDetectSeparator(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   rune
	}{
		{"a,b,c\n", ','},
		{`"age";"job";"marital"` + "\n", ';'},
		{"a\tb\tc", '\t'},
		{`"x,y";"z"`, ';'},
		{"score", ','},
	} {
		if got := detectSeparator(tc.header); got != tc.want {
			t.Errorf("DetectSeparator(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
}

func TestReadColumn(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		sep           rune
	}{
		{"comma.csv", "id,age\n1,58\n2, 44.5\n3,-1e3\n", 0},
		{"semicolon.csv", "\"id\";\"age\"\n\"a;b\";58\n\"c\";\"44.5\"\n\"d\";-1e3\n", 0},
		{"tab.tsv", "id\tage\n1\t58\n2\t44.5\n3\t-1e3\n", 0},
		{"crlf.csv", "\ufeffage,id\r\n58,1\r\n44.5,2\r\n-1e3,3\r\n", 0},
		{"explicit.csv", "id|age\n1|58\n2|44.5\n3|-1e3\n", '|'},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadColumn(writeTemp(t, tc.name, tc.content), "age", tc.sep)
			if err != nil {
				t.Fatal(err)
			}
			if want := []float64{58, 44.5, -1000}; !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestReadColumnErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content, column string
		want                  []string // substrings of the error
	}{
		{"text.csv", "id,age\n1,58\n2,abc\n", "age", []string{"text.csv:3:", `column "age"`, `"abc" is not a number`}},
		{"nan.csv", "id,age\n1,NaN\n", "age", []string{"nan.csv:2:", `missing value "NaN"`}},
		{"inf.csv", "id,age\n1,58\n2,-Inf\n", "age", []string{"inf.csv:3:", `"-Inf" is not a finite number`}},
		{"range.csv", "age\n1e999\n", "age", []string{"range.csv:2:", "out of the float64 range"}},
		{"empty-field.csv", "id,age\n1,\n", "age", []string{"empty-field.csv:2:", `missing value ""`}},
		{"empty.csv", "", "age", []string{"empty.csv: empty input"}},
		{"header-only.csv", "id,age\n", "age", []string{"header-only.csv: no data rows"}},
		{"missing.csv", "id,age\n1,2\n", "agee", []string{`no column "agee"`, `"id", "age"`}},
		{"ragged.csv", "id,age\n1,2\n3,4,5\n", "age", []string{"ragged.csv:3:", "number of fields"}},
		{"dup.csv", "age,age\n1,2\n", "age", []string{"dup.csv:1:", `both named "age"`}},
		{"quote.csv", "id,age\n\"1,2\n", "age", []string{"quote.csv:2:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadColumn(writeTemp(t, tc.name, tc.content), tc.column, 0)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := ReadColumn(filepath.Join(t.TempDir(), "absent.csv"), "age", 0); err == nil || !strings.Contains(err.Error(), "absent.csv") {
		t.Errorf("missing file: error %v does not name the file", err)
	}
}

func TestReadColumnFromLines(t *testing.T) {
	got, err := ReadColumnFrom(strings.NewReader("0.5\n\n 3 \n-2\n"), "stdin", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.5, 3, -2}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for input, want := range map[string]string{
		"1\n2\nx\n": "stdin:3: \"x\" is not a number",
		"1\ninf\n":  "stdin:2: \"inf\" is not a finite number",
		"\n \n":     "stdin: empty input: no numbers",
	} {
		if _, err := ReadColumnFrom(strings.NewReader(input), "stdin", "", 0); err == nil || err.Error() != want {
			t.Errorf("ReadColumnFrom(%q): error %v, want %q", input, err, want)
		}
	}
}

func TestReadColumnFromCSV(t *testing.T) {
	got, err := ReadColumnFrom(strings.NewReader("s;y\n0.25;1\n0.75;0\n"), "pipe", "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.25, 0.75}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// Missing values are an error wrapping ErrMissing, or skipped and counted.
func TestReadColumnMissing(t *testing.T) {
	for _, c := range []struct{ in, column string }{{"x\n1\n?\n\n2\nNA\n", "x"}, {"1\n\n?\n2\nNA\n", ""}} {
		if _, _, err := ReadColumnMissing(strings.NewReader(c.in), "in", c.column, 0, false); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "in:3:") {
			t.Errorf("column %q strict: %v, want ErrMissing at in:3 ", c.column, err)
		}
		v, skipped, err := ReadColumnMissing(strings.NewReader(c.in), "in", c.column, 0, true)
		if err != nil || len(v) != 2 || skipped != 2 {
			t.Errorf("column %q skip: %v, %d skipped, %v; want 2 values, 2 skipped", c.column, v, skipped, err)
		}
	}
}
