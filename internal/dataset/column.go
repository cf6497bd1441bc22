package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ReadColumn reads the numeric column named column from the CSV file at
// path. The first line is the header; sep is the field separator, or 0 to
// detect ',', ';' or tab from the header line (DetectSeparator). Fields may
// be double-quoted. Every value must be a finite number: an empty field,
// NaN, ±Inf or text is an error naming the file, line and column.
//
// Path "" or "-" reads standard input instead; with column "" the input
// has no header and holds one number per line (blank lines are skipped).
func ReadColumn(path, column string, sep rune) ([]float64, error) {
	f, name, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadColumnFrom(f, name, column, sep)
}

// ReadColumnFrom is ReadColumn on an open reader; name identifies the input
// in errors. With column "" the input is one number per line, without a
// header; otherwise it is CSV with a header line, as for ReadColumn.
func ReadColumnFrom(r io.Reader, name, column string, sep rune) ([]float64, error) {
	values, _, err := ReadColumnMissing(r, name, column, sep, false)
	return values, err
}

// ErrMissing marks a missing value (IsMissing: "", "?", "NA", "NaN",
// "null") where a number is needed.
var ErrMissing = errors.New("missing value")

// ReadColumnMissing is ReadColumnFrom with a rule for missing values
// (IsMissing): with skip they are left out and counted, otherwise each is
// an error wrapping ErrMissing that names the line.
func ReadColumnMissing(r io.Reader, name, column string, sep rune, skip bool) (values []float64, skipped int, err error) {
	if column == "" {
		return readLines(r, name, skip)
	}
	rs, err := newRecords(r, name, sep)
	if err != nil {
		return nil, 0, err
	}
	col, err := rs.column(column)
	if err != nil {
		return nil, 0, err
	}
	for {
		row, line, err := rs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		if isMissing(strings.TrimSpace(row[col])) {
			if !skip {
				return nil, 0, fmt.Errorf("%s:%d: column %q: %w %q", name, line, column, ErrMissing, row[col])
			}
			skipped++
			continue
		}
		v, err := parseFinite(row[col])
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: column %q: %v", name, line, column, err)
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return nil, skipped, fmt.Errorf("%s: no data rows after the header%s", name, skippedNote(skipped))
	}
	return values, skipped, nil
}

// readLines reads one finite number per line, skipping blank lines and,
// with skip, other missing values (IsMissing).
func readLines(r io.Reader, name string, skip bool) (values []float64, skipped int, err error) {
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if isMissing(text) {
			if !skip {
				return nil, 0, fmt.Errorf("%s:%d: %w %q", name, line, ErrMissing, text)
			}
			skipped++
			continue
		}
		v, err := parseFinite(text)
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		values = append(values, v)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	if len(values) == 0 {
		return nil, skipped, fmt.Errorf("%s: empty input: no numbers%s", name, skippedNote(skipped))
	}
	return values, skipped, nil
}

// skippedNote says how many missing values were skipped, if any.
func skippedNote(skipped int) string {
	if skipped == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d missing values skipped)", skipped)
}
