package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// stdinName is the name used in errors for data read from standard input.
const stdinName = "stdin"

// separators are the field separators DetectSeparator chooses from.
var separators = []rune{',', ';', '\t'}

// detectSeparator returns the field separator of a CSV header line: the one
// of ',', ';' and tab that occurs most often outside double quotes, or ','
// when none occurs (a single-column file).
func detectSeparator(header string) rune {
	counts := make(map[rune]int, len(separators))
	inQuotes := false
	for _, c := range header {
		switch {
		case c == '"':
			inQuotes = !inQuotes
		case !inQuotes:
			counts[c]++
		}
	}
	best := ','
	for _, s := range separators {
		if counts[s] > counts[best] {
			best = s
		}
	}
	return best
}

// records iterates over the data rows of a CSV input with a header line.
type records struct {
	name   string
	header []string
	csv    *csv.Reader
}

// openFile opens path for reading; "" and "-" mean standard input. The
// returned name is used in errors.
func openFile(path string) (r io.ReadCloser, name string, err error) {
	if path == "" || path == "-" {
		return io.NopCloser(os.Stdin), stdinName, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// newRecords reads the header line of r, detecting the separator when sep
// is 0, and returns an iterator over the data rows. Quoted fields follow
// RFC 4180 strictly: a quote inside an unquoted field or an unterminated
// quoted field is an error, rather than a guess that could silently merge
// rows.
func newRecords(r io.Reader, name string, sep rune) (*records, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	first, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if strings.TrimSpace(first) == "" {
		return nil, fmt.Errorf("%s: empty input: no header line", name)
	}
	if sep == 0 {
		sep = detectSeparator(first)
	}
	if sep == '"' || sep == '\r' || sep == '\n' {
		return nil, fmt.Errorf("%s: invalid separator %q", name, sep)
	}
	c := csv.NewReader(io.MultiReader(strings.NewReader(first), br))
	c.Comma = sep
	header, err := c.Read()
	if err != nil {
		return nil, csvError(name, err)
	}
	seen := make(map[string]int, len(header))
	for i := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(header[i], "\ufeff"))
		if header[i] == "" {
			return nil, fmt.Errorf("%s:1: column %d has an empty name", name, i+1)
		}
		if j, dup := seen[header[i]]; dup {
			return nil, fmt.Errorf("%s:1: columns %d and %d are both named %q", name, j+1, i+1, header[i])
		}
		seen[header[i]] = i
	}
	return &records{name: name, header: header, csv: c}, nil
}

// next returns the next data row and the line it starts on, or io.EOF
// after the last one. A row with a different number of fields than the
// header is an error.
func (rs *records) next() (row []string, line int, err error) {
	row, err = rs.csv.Read()
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		return nil, 0, csvError(rs.name, err)
	}
	line, _ = rs.csv.FieldPos(0)
	return row, line, nil
}

// column returns the index of the named column, or an error listing the
// available ones.
func (rs *records) column(name string) (int, error) {
	return columnIndex(rs.name, rs.header, name)
}

// columnIndex returns the index of column in header; source names the
// input in errors.
func columnIndex(source string, header []string, column string) (int, error) {
	for i, h := range header {
		if h == column {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s: no column %q; the columns are %s", source, column, quoteList(header))
}

// quoteList formats names as a comma-separated list of quoted strings.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// csvError rewrites an encoding/csv error as "name:line: problem".
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("%s:%d: row has a different number of fields than the header", name, pe.StartLine)
		}
		return fmt.Errorf("%s:%d: %v", name, pe.StartLine, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// parseFinite parses s (surrounding spaces ignored) as a finite decimal
// float64 as CSV writers print one: NaN and ±Inf are rejected, and so
// is Go literal syntax strconv.ParseFloat would take (digit separators
// "1_000", hexadecimal "0x1p-1"). A decimal comma is named as such.
func parseFinite(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty value is not a number")
	}
	digits := strings.TrimLeft(t, "+-")
	switch {
	case strings.Contains(t, "_"):
		return 0, fmt.Errorf("%q is not a number: digit separators are Go syntax, not CSV; write %s", t, strings.ReplaceAll(t, "_", ""))
	case len(digits) > 1 && digits[0] == '0' && strings.ContainsAny(digits[1:2], "xXbBoO"):
		return 0, fmt.Errorf("%q is not a decimal number (hexadecimal, binary and octal are Go syntax, not CSV)", t)
	case strings.Count(t, ",") == 1 && !strings.ContainsAny(t, ".eE"):
		if _, err := strconv.ParseFloat(strings.Replace(t, ",", ".", 1), 64); err == nil {
			return 0, fmt.Errorf("%q is not a number: a decimal comma? write %s (and separate fields with --sep ';' or tabs)", t, strings.Replace(t, ",", ".", 1))
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is out of the float64 range", t)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", t)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", t)
	}
	return v, nil
}
