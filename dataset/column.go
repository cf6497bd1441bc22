package dataset

import (
	"bufio"
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
	if column == "" {
		return readLines(r, name)
	}
	rs, err := newRecords(r, name, sep)
	if err != nil {
		return nil, err
	}
	col, err := rs.column(column)
	if err != nil {
		return nil, err
	}
	var values []float64
	for {
		row, line, err := rs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		v, err := parseFinite(row[col])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column %q: %v", name, line, column, err)
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header", name)
	}
	return values, nil
}

// readLines reads one finite number per line, skipping blank lines.
func readLines(r io.Reader, name string) ([]float64, error) {
	sc := bufio.NewScanner(r)
	var values []float64
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		v, err := parseFinite(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		values = append(values, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("%s: empty input: no numbers", name)
	}
	return values, nil
}
