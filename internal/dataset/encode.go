package dataset

import (
	"fmt"
	"math"
	"slices"
)

// defaultMaxLevels is the default encoderOptions.MaxLevels.
const defaultMaxLevels = 100

// encoderOptions configures fitEncoder.
type encoderOptions struct {
	// Label is the label column, never a feature ("" if there is none).
	Label string
	// Drop lists further columns that are not features (identifiers such
	// as the Diabetes file's encounter_id and patient_nbr).
	Drop []string
	// MaxLevels drops categorical columns with more distinct values in the
	// training rows (free text, identifiers, fine-grained codes); zero
	// means DefaultMaxLevels.
	MaxLevels int
}

// DroppedColumn is a column fitEncoder did not turn into features, and why.
type DroppedColumn struct {
	Name   string
	Reason string
}

// Encoder turns rows of a Table into feature vectors for a linear model.
// Everything it learns comes from the training rows given to fitEncoder:
//
//   - a numeric column (every present value of the whole table is a finite
//     number) becomes (x − mean)/std, with a missing value imputed by the
//     mean (so 0), plus a 0/1 missing indicator if values are missing in
//     the training rows;
//   - a categorical column becomes one 0/1 indicator per level seen in
//     training, missing values (IsMissing) forming a level of their own; a
//     level not seen in training encodes as all zeros.
type Encoder struct {
	columns []columnEncoder
	names   []string
	// Dropped lists the columns that give no feature, in table order.
	Dropped []DroppedColumn
}

// columnEncoder encodes one column into width consecutive features.
type columnEncoder struct {
	index, width int
	numeric      bool
	// numeric: standardisation and missing indicator.
	mean, std float64
	indicator bool
	// categorical: feature offset of each level.
	levels map[string]int
}

// missingLevel is the name of the missing-value level in feature names.
const missingLevel = "<missing>"

// fitEncoder learns an Encoder from the given training rows of t.
func fitEncoder(t *Table, train []int, opts encoderOptions) (*Encoder, error) {
	if len(train) == 0 {
		return nil, fmt.Errorf("%s: no training rows", t.Name)
	}
	maxLevels := opts.MaxLevels
	if maxLevels == 0 {
		maxLevels = defaultMaxLevels
	}
	if maxLevels < 0 {
		return nil, fmt.Errorf("MaxLevels = %d, must be positive", maxLevels)
	}
	skip := make(map[int]string)
	for _, name := range opts.Drop {
		j, err := t.column(name)
		if err != nil {
			return nil, fmt.Errorf("dropping columns: %w", err)
		}
		skip[j] = "dropped as requested"
	}
	if opts.Label != "" {
		j, err := t.column(opts.Label)
		if err != nil {
			return nil, err
		}
		skip[j] = "label"
	}
	e := &Encoder{}
	for j, name := range t.Columns {
		if reason, ok := skip[j]; ok {
			e.Dropped = append(e.Dropped, DroppedColumn{name, reason})
			continue
		}
		var c columnEncoder
		var reason string
		if t.isNumericColumn(j) {
			c, reason = fitNumeric(t, j, train)
		} else {
			c, reason = fitCategorical(t, j, train, maxLevels)
		}
		if reason != "" {
			e.Dropped = append(e.Dropped, DroppedColumn{name, reason})
			continue
		}
		e.names = append(e.names, c.featureNames(name)...)
		e.columns = append(e.columns, c)
	}
	if len(e.columns) == 0 {
		return nil, fmt.Errorf("%s: no feature columns left (dropped: %v)", t.Name, e.Dropped)
	}
	return e, nil
}

// fitNumeric learns the mean and standard deviation (population, as
// scikit-learn's StandardScaler) of the present training values of column
// j; reason is non-empty if the column gives no information.
func fitNumeric(t *Table, j int, train []int) (c columnEncoder, reason string) {
	c = columnEncoder{index: j, numeric: true}
	var n, sum, sumSq float64
	var buf []string
	for _, i := range train {
		buf = t.row(i, buf)
		s := buf[j]
		if isMissing(s) {
			c.indicator = true
			continue
		}
		v, _ := parseFinite(s) // isNumericColumn checked every value
		n++
		sum += v
		sumSq += v * v
	}
	if n == 0 {
		return c, "no values in the training rows"
	}
	c.mean = sum / n
	c.std = math.Sqrt(math.Max(sumSq/n-c.mean*c.mean, 0))
	switch {
	case c.std <= 1e-12*math.Max(1, math.Abs(c.mean)) && !c.indicator:
		return c, "constant in the training rows"
	case c.std <= 1e-12*math.Max(1, math.Abs(c.mean)):
		c.std = 1 // constant when present: only the indicator informs
	}
	c.width = 1
	if c.indicator {
		c.width = 2
	}
	return c, ""
}

// fitCategorical learns the levels of column j in the training rows, in
// order of first appearance; reason is non-empty if there is only one or
// more than maxLevels.
func fitCategorical(t *Table, j int, train []int, maxLevels int) (c columnEncoder, reason string) {
	c = columnEncoder{index: j, levels: make(map[string]int)}
	var buf []string
	for _, i := range train {
		buf = t.row(i, buf)
		level := categoricalLevel(buf[j])
		if _, ok := c.levels[level]; !ok {
			c.levels[level] = len(c.levels)
			if len(c.levels) > maxLevels {
				return c, fmt.Sprintf("more than %d distinct values in the training rows", maxLevels)
			}
		}
	}
	if len(c.levels) == 1 {
		return c, "a single value in the training rows"
	}
	c.width = len(c.levels)
	return c, ""
}

// categoricalLevel maps every missing spelling to one level.
func categoricalLevel(s string) string {
	if isMissing(s) {
		return missingLevel
	}
	return s
}

// featureNames returns the names of the features of a column called name:
// name, name=<missing> for the indicator, or name=level for each level.
func (c *columnEncoder) featureNames(name string) []string {
	if c.numeric {
		names := []string{name}
		if c.indicator {
			names = append(names, name+"="+missingLevel)
		}
		return names
	}
	names := make([]string, len(c.levels))
	for level, k := range c.levels {
		names[k] = name + "=" + level
	}
	return names
}

// Dim returns the number of features.
func (e *Encoder) Dim() int {
	return len(e.names)
}

// Names returns the feature names, in order: a numeric column's name, then
// "name=<missing>" for its missing indicator; "name=level" for each level
// of a categorical column.
func (e *Encoder) Names() []string {
	return slices.Clone(e.names)
}

// encode writes the features of row (a row of the table the encoder was fit
// on, or of one with the same columns) into dst[:Dim()] and returns it; dst
// is allocated if it is too short. A numeric column holding text is an
// error.
func (e *Encoder) encode(row []string, dst []float64) ([]float64, error) {
	if cap(dst) < len(e.names) {
		dst = make([]float64, len(e.names))
	}
	dst = dst[:len(e.names)]
	clear(dst)
	k := 0
	for _, c := range e.columns {
		if c.index >= len(row) {
			return nil, fmt.Errorf("row has %d fields, the encoder needs field %d", len(row), c.index+1)
		}
		s := row[c.index]
		switch {
		case c.numeric && isMissing(s):
			if c.indicator {
				dst[k+1] = 1
			}
		case c.numeric:
			v, err := parseFinite(s)
			if err != nil {
				return nil, fmt.Errorf("field %d: %v", c.index+1, err)
			}
			dst[k] = (v - c.mean) / c.std
		default:
			if level, ok := c.levels[categoricalLevel(s)]; ok {
				dst[k+level] = 1
			}
		}
		k += c.width
	}
	return dst, nil
}

// rowEncoder returns a function that encodes the r-th of the given rows
// of t into dst (logreg.FitRows), so that the rows need not be held
// encoded all at once, and where it stores the first error, which names
// the row.
func (e *Encoder) rowEncoder(t *Table, rows []int) (encode func(r int, dst []float64) ([]float64, error), firstErr *error) {
	var buf []string
	firstErr = new(error)
	return func(r int, dst []float64) ([]float64, error) {
		buf = t.row(rows[r], buf)
		x, err := e.encode(buf, dst)
		if err != nil && *firstErr == nil {
			*firstErr = fmt.Errorf("%s: %v", t.where(rows[r]), err)
		}
		return x, *firstErr
	}, firstErr
}
