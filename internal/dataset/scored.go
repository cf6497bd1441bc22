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
type labelRule struct {
	value  string
	negate bool
	binary bool
}

// newLabelRule parses the positive argument.
func newLabelRule(positive string) labelRule {
	switch {
	case positive == "":
		return labelRule{binary: true}
	case strings.HasPrefix(positive, "!"):
		return labelRule{value: positive[1:], negate: true}
	default:
		return labelRule{value: positive}
	}
}

// label returns the 0/1 label of the text s.
func (r labelRule) label(s string) (int, error) {
	s = strings.TrimSpace(s)
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

// ReadScored reads scored, labelled records from the CSV file at path
// ("" or "-" for standard input): the finite number in column scoreCol
// (a classifier's score or predicted probability) and the label in column
// labelCol. With positive "" the label must be 0 or 1; with positive "v"
// the label is 1 iff the value is v, and with "!v" iff it is not v (so
// "!NO" makes every readmission in the Diabetes data positive). The
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
	rs, err := newRecords(r, name, 0)
	if err != nil {
		return nil, nil, err
	}
	sc, err := rs.column(scoreCol)
	if err != nil {
		return nil, nil, err
	}
	lc, err := rs.column(labelCol)
	if err != nil {
		return nil, nil, err
	}
	rule := newLabelRule(positive)
	for {
		row, line, err := rs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		s, err := parseFinite(row[sc])
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: column %q: %v", name, line, scoreCol, err)
		}
		y, err := rule.label(row[lc])
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: column %q: %v", name, line, labelCol, err)
		}
		scores = append(scores, s)
		labels = append(labels, y)
	}
	if len(scores) == 0 {
		return nil, nil, fmt.Errorf("%s: no data rows after the header", name)
	}
	return scores, labels, nil
}
