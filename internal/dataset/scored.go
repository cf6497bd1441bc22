package dataset

import (
	"fmt"
	"io"
	"strings"
)

// labelRule maps the text of a label column to 0 or 1, following the
// positive argument of ReadScored and ScoreTable:
//
//   - "": the value must be 0 or 1;
//   - "!v": 1 iff the value is not v (e.g. "!NO" for readmitted ≠ "NO");
//   - "v": 1 iff the value is v.
//
// Values are compared after trimming surrounding spaces.
//
// It counts the values it labels, so that check can say which were found.
type labelRule struct {
	value  string
	negate bool
	binary bool
	counts map[string]int
	order  []string // values in order of first appearance
}

// newLabelRule parses the positive argument.
func newLabelRule(positive string) *labelRule {
	r := &labelRule{counts: map[string]int{}}
	switch {
	case positive == "":
		r.binary = true
	case strings.HasPrefix(positive, "!"):
		r.value, r.negate = positive[1:], true
	default:
		r.value = positive
	}
	return r
}

// label returns the 0/1 label of the text s.
func (r *labelRule) label(s string) (int, error) {
	s = strings.TrimSpace(s)
	if r.counts[s] == 0 {
		r.order = append(r.order, s)
	}
	r.counts[s]++
	if r.binary {
		switch s {
		case "0":
			return 0, nil
		case "1":
			return 1, nil
		}
		return 0, fmt.Errorf("label %q is not 0 or 1 (name the positive class to use other labels)", s)
	}
	if (s == r.value) != r.negate {
		return 1, nil
	}
	return 0, nil
}

// check refuses, once every label is read, a positive value that cannot
// be meant: one that matches none of two or more values found (a
// misspelling, e.g. "Yes" for "yes"), and a positive value v (not "!v")
// among more than two values, which would make every other value
// negative without a word. The error names the column, the values found
// with their counts, and what to pass. One value only is accepted: a
// party's rows may all be of one class.
func (r *labelRule) check(labelCol string) error {
	if r.binary || len(r.order) < 2 {
		return nil
	}
	found := make([]string, len(r.order))
	for k, v := range r.order {
		found[k] = fmt.Sprintf("%q (%d)", v, r.counts[v])
	}
	values := fmt.Sprintf("label column %q has %d values, %s", labelCol, len(r.order), strings.Join(found, ", "))
	switch {
	case r.counts[r.value] == 0 && r.negate:
		return fmt.Errorf("%s; the positive class \"!%s\" (not %q) matches none of them, so every row would be positive: name one of them after the ! (case matters)", values, r.value, r.value)
	case r.counts[r.value] == 0:
		return fmt.Errorf("%s; the positive value %q matches none of them: pass one of them (case matters)", values, r.value)
	case !r.negate && len(r.order) > 2:
		return fmt.Errorf("%s; with positive value %q the other %d would all be negative: pass \"!v\" to make every value but v positive (e.g. \"!%s\"), or keep two values in the file", values, r.value, len(r.order)-1, r.order[0])
	}
	return nil
}

// ReadScored reads scored, labelled records from the CSV file at path
// ("" or "-" for standard input): the finite number in column scoreCol
// (a classifier's score or predicted probability) and the label in column
// labelCol. With positive "" the label must be 0 or 1; with positive "v"
// the label is 1 iff the value is v, and with "!v" iff it is not v (so
// "!NO" makes every readmission in the Diabetes data positive); a
// positive value that matches none of the values found, or "v" among
// more than two values, is refused with the values and their counts. The
// separator is detected from the header line. Errors name the input, line
// and column.
func ReadScored(path, scoreCol, labelCol, positive string) (scores []float64, labels []int, err error) {
	f, name, err := openFile(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return readScoredFrom(f, name, scoreCol, labelCol, positive)
}

// readScoredFrom is ReadScored on an open reader; name identifies the input
// in errors.
func readScoredFrom(r io.Reader, name, scoreCol, labelCol, positive string) (scores []float64, labels []int, err error) {
	rows, err := readScoredRows(r, name, scoreCol, labelCol, positive, "", false)
	if err != nil {
		return nil, nil, err
	}
	return rows.Scores, rows.Labels, nil
}

// ScoredRows are the rows ReadScoredRows keeps, in file order, each
// field of a row at the same index.
type ScoredRows struct {
	Scores []float64
	Labels []int
	// Extra holds the extra column's value of each row; nil without one.
	Extra []float64
	// Lines is each row's line in the file (the header is line 1).
	Lines []int
	// Skipped counts the rows left out for a missing value.
	Skipped int
}

// ReadScoredRows is ReadScored with an optional extra numeric column
// (extraCol, "" for none, e.g. a probability read beside the score) and a
// rule for missing values (IsMissing): with skip, a row missing any of
// the columns used is left out whole — so its fields never shift against
// another row's — and counted; otherwise it is read as ReadScored reads
// it (a missing score is an error naming the line).
func ReadScoredRows(path, scoreCol, labelCol, positive, extraCol string, skip bool) (*ScoredRows, error) {
	f, name, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readScoredRows(f, name, scoreCol, labelCol, positive, extraCol, skip)
}

// readScoredRows is ReadScoredRows on an open reader.
func readScoredRows(r io.Reader, name, scoreCol, labelCol, positive, extraCol string, skip bool) (*ScoredRows, error) {
	rs, err := newRecords(r, name, 0)
	if err != nil {
		return nil, err
	}
	cols := []string{scoreCol, labelCol}
	if extraCol != "" {
		cols = append(cols, extraCol)
	}
	idx := make([]int, len(cols))
	for k, c := range cols {
		if idx[k], err = rs.column(c); err != nil {
			return nil, err
		}
	}
	rule := newLabelRule(positive)
	out := &ScoredRows{}
	for {
		row, line, err := rs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if skip && missingField(row, idx) >= 0 {
			out.Skipped++
			continue
		}
		s, err := parseFinite(row[idx[0]])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column %q: %v", name, line, scoreCol, err)
		}
		y, err := rule.label(row[idx[1]])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column %q: %v", name, line, labelCol, err)
		}
		if extraCol != "" {
			v, err := parseFinite(row[idx[2]])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: column %q: %v", name, line, extraCol, err)
			}
			out.Extra = append(out.Extra, v)
		}
		out.Scores, out.Labels, out.Lines = append(out.Scores, s), append(out.Labels, y), append(out.Lines, line)
	}
	if len(out.Scores) == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header%s", name, skippedNote(out.Skipped))
	}
	if err := rule.check(labelCol); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// missingField returns the first k with row[idx[k]] missing (IsMissing),
// or −1.
func missingField(row []string, idx []int) int {
	for k, i := range idx {
		if isMissing(strings.TrimSpace(row[i])) {
			return k
		}
	}
	return -1
}
