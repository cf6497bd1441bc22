package dataset

import (
	"fmt"
	"io"
	"strings"
)

// Table is a CSV file read as text: a header and rows of fields, each
// trimmed of surrounding spaces. Row i holds one field per column.
type Table struct {
	// Name identifies the source in errors (a path, "stdin", "synthetic").
	Name    string
	Columns []string
	Rows    [][]string
	// Lines[i] is the input line row i starts on (for errors); nil for
	// generated tables.
	Lines []int
	// synthetic, when not nil, holds the rows in place of Rows
	// (ScoreSynthetic).
	synthetic *syntheticRows
}

// numRows returns the number of rows.
func (t *Table) numRows() int {
	if t.synthetic != nil {
		return len(t.synthetic.rows)
	}
	return len(t.Rows)
}

// row returns row i: Rows[i], or, for a table held as numbers, its text
// written into buf (allocated when too short) and valid until buf is
// written again.
func (t *Table) row(i int, buf []string) []string {
	if t.synthetic != nil {
		return t.synthetic.text(t.synthetic.rows[i], buf)
	}
	return t.Rows[i]
}

// ReadTable reads the CSV file at path ("" or "-" for standard input) as a
// Table. sep is the field separator, or 0 to detect it from the header
// line. Every row must have as many fields as the header; there must be at
// least one row.
func ReadTable(path string, sep rune) (*Table, error) {
	f, name, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readTableFrom(f, name, sep)
}

// readTableFrom is ReadTable on an open reader; name identifies the input in
// errors.
func readTableFrom(r io.Reader, name string, sep rune) (*Table, error) {
	rs, err := newRecords(r, name, sep)
	if err != nil {
		return nil, err
	}
	t := &Table{Name: name, Columns: rs.header}
	for {
		row, line, err := rs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for j := range row {
			row[j] = strings.TrimSpace(row[j])
		}
		t.Rows = append(t.Rows, row)
		t.Lines = append(t.Lines, line)
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header", name)
	}
	return t, nil
}

// column returns the index of the named column, or an error listing the
// columns there are.
func (t *Table) column(name string) (int, error) {
	return columnIndex(t.Name, t.Columns, name)
}

// where names row i in errors: "name:line" for a file, "name row i+1"
// otherwise.
func (t *Table) where(i int) string {
	if t.Lines != nil {
		return fmt.Sprintf("%s:%d", t.Name, t.Lines[i])
	}
	return fmt.Sprintf("%s row %d", t.Name, i+1)
}

// isMissing reports whether a trimmed field means a missing value: "",
// "?" (the UCI Diabetes file), and the usual NA spellings "NA", "N/A",
// "NaN", "null" in the lower- and upper-case forms listed here.
func isMissing(s string) bool {
	switch s {
	case "", "?", "NA", "N/A", "na", "n/a", "NaN", "nan", "null", "NULL":
		return true
	}
	return false
}

// isNumericColumn reports whether every non-missing value of column j is a
// finite number, and at least one value is present.
func (t *Table) isNumericColumn(j int) bool {
	present := false
	var buf []string
	for i := range t.numRows() {
		row := t.row(i, buf)
		buf = row
		if isMissing(row[j]) {
			continue
		}
		if _, err := parseFinite(row[j]); err != nil {
			return false
		}
		present = true
	}
	return present
}
