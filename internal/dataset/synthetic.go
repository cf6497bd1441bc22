package dataset

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// SyntheticLabel is the label column of Synthetic tables; its values are
// "0" and "1".
const SyntheticLabel = "y"

// syntheticColumns are the columns of Synthetic tables.
var syntheticColumns = []string{"age", "income", "tenure", "region", "plan", SyntheticLabel}

// Effects of the categorical levels on the log-odds ("" is missing).
var (
	regionEffect = map[string]float64{"north": 0, "south": 0.4, "east": -0.5, "west": 0.2}
	planEffect   = map[string]float64{"basic": 0, "plus": 0.6, "premium": 1.2, "": -0.6}
	regions      = []string{"north", "south", "east", "west"}
	plans        = []string{"basic", "plus", "premium", ""} // "" (index 3): missing
	labels01     = []string{"0", "1"}
)

// Synthetic generates a labelled table of n rows for a classifier to score,
// so that the tools run without data files. Columns: age (integer 18–90),
// income (in thousands; "?" for about 8% of rows), tenure (years, 0–10),
// region (4 levels), plan (3 levels; empty for about 5%), and the label y.
// y is drawn from a logistic model in the observed values,
//
//	logit P(y=1) = −1.3 + 0.04·(age−45) + 0.7·(income−50)/15 − 0.15·tenure
//	               + region effect + plan effect,
//
// with a missing income contributing +0.5 instead and a missing plan −0.6:
// a model that Encoder and logreg can represent exactly, whose test AUC is
// about 0.8. The same seed gives the same table. n must not be negative
// (it panics, as make does).
func Synthetic(n int, seed uint64) *Table {
	t := syntheticCompact(n, seed)
	t.Rows = make([][]string, n)
	for i := range t.Rows {
		t.Rows[i] = t.row(i, nil)
	}
	t.synthetic = nil
	return t
}

// ScoreSynthetic is ScoreTable on the Synthetic table of n rows and seed
// with its label SyntheticLabel, without holding the table as text: its
// rows are kept as 8 bytes of numbers each and written out as text one
// at a time, so that millions of rows fit in little memory. The result
// is ScoreTable's on Synthetic(n, seed), bit for bit.
func ScoreSynthetic(n int, seed uint64, opts SplitOptions) (*Scored, error) {
	return ScoreTable(syntheticCompact(n, seed), SyntheticLabel, "", opts)
}

// syntheticStream is the PCG stream of Synthetic ("synth" in ASCII).
const syntheticStream = 0x73796e7468

// syntheticRows are the rows of a Synthetic table as numbers: each
// field's text is the interned string of its number (texts).
type syntheticRows struct {
	rows  []syntheticRow
	texts *syntheticTexts
}

// syntheticRow is one row: income in tenths plus one (0: missing),
// tenure in hundredths, age, and region·8 + plan·2 + y (plan 3: missing).
type syntheticRow struct {
	income uint32
	tenure uint16
	age    uint8
	levels uint8
}

// syntheticTexts interns the texts of the numeric fields and their
// values as parsed: a Synthetic table has few distinct ones (73 ages,
// about 1 500 incomes, 1 001 tenures), kept once each.
type syntheticTexts struct {
	ages, incomes, tenures internedNumbers
}

// internedNumbers are the texts of one field by index, and their values.
type internedNumbers struct {
	texts  []string
	values []float64
}

// intern adds text (formatted by the caller) as the text of index v when
// it is the first, and returns its value as strconv.ParseFloat reads it.
func (in *internedNumbers) intern(v int, text []byte) float64 {
	if v >= len(in.texts) {
		in.texts = append(in.texts, make([]string, v+1-len(in.texts))...)
		in.values = append(in.values, make([]float64, v+1-len(in.values))...)
	}
	if in.texts[v] == "" {
		in.texts[v] = string(text)
		in.values[v], _ = strconv.ParseFloat(in.texts[v], 64)
	}
	return in.values[v]
}

// digits returns the number the decimal digits of text spell, ignoring
// the point: the value in tenths or hundredths of a fixed-point text.
func digits(text []byte) int {
	var v int
	for _, c := range text {
		if c != '.' {
			v = 10*v + int(c-'0')
		}
	}
	return v
}

// syntheticCompact draws the Synthetic table of n rows and seed, keeping
// its rows as numbers (Table.row writes one out as text).
func syntheticCompact(n int, seed uint64) *Table {
	rng := rand.New(rand.NewPCG(seed, syntheticStream))
	s := &syntheticRows{rows: make([]syntheticRow, n), texts: &syntheticTexts{}}
	var buf [32]byte
	for i := range s.rows {
		r := syntheticRow{age: uint8(18 + rng.IntN(73))}
		var income float64
		if rng.Float64() >= 0.08 {
			text := strconv.AppendFloat(buf[:0], math.Max(5, 50+15*rng.NormFloat64()), 'f', 1, 64)
			r.income = uint32(digits(text)) + 1
			income = s.texts.incomes.intern(int(r.income), text)
		}
		text := strconv.AppendFloat(buf[:0], 10*rng.Float64(), 'f', 2, 64)
		r.tenure = uint16(digits(text))
		tenure := s.texts.tenures.intern(int(r.tenure), text)
		plan := 3
		if rng.Float64() >= 0.05 {
			plan = rng.IntN(3)
		}
		region := rng.IntN(len(regions))
		r.levels = uint8(region<<3 | plan<<1)
		age := s.texts.ages.intern(int(r.age), strconv.AppendInt(buf[:0], int64(r.age), 10))
		z := logitOf(age, tenure, income, r.income > 0, regionEffect[regions[region]], planEffect[plans[plan]])
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			r.levels |= 1
		}
		s.rows[i] = r
	}
	return &Table{Name: "synthetic", Columns: syntheticColumns, synthetic: s}
}

// text writes row r out as text into dst (one field per column).
func (s *syntheticRows) text(r syntheticRow, dst []string) []string {
	income := "?"
	if r.income > 0 {
		income = s.texts.incomes.texts[r.income]
	}
	return append(dst[:0], s.texts.ages.texts[r.age], income, s.texts.tenures.texts[r.tenure],
		regions[r.levels>>3], plans[r.levels>>1&3], labels01[r.levels&1])
}

// syntheticLogit returns the true log-odds of a Synthetic row.
func syntheticLogit(row []string) float64 {
	age, _ := strconv.ParseFloat(row[0], 64)
	tenure, _ := strconv.ParseFloat(row[2], 64)
	income, err := strconv.ParseFloat(row[1], 64)
	return logitOf(age, tenure, income, err == nil, regionEffect[row[3]], planEffect[row[4]])
}

// logitOf is the true log-odds of a Synthetic row of the given values and
// level effects, the income missing unless hasIncome.
func logitOf(age, tenure, income float64, hasIncome bool, region, plan float64) float64 {
	z := -1.3 + 0.04*(age-45) - 0.15*tenure + region + plan
	if hasIncome {
		z += 0.7 * (income - 50) / 15
	} else {
		z += 0.5
	}
	return z
}
