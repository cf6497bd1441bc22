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

// syntheticTexts interns the texts of the numeric fields: a Synthetic
// table has few distinct ones (73 ages, about 1 500 incomes, 1 001
// tenures), kept once each.
type syntheticTexts struct {
	ages, incomes, tenures []string
}

// intern returns the text of number v (an index) in texts, adding text
// (formatted by the caller) when it is the first.
func intern(texts *[]string, v int, text []byte) string {
	if v >= len(*texts) {
		*texts = append(*texts, make([]string, v+1-len(*texts))...)
	}
	if (*texts)[v] == "" {
		(*texts)[v] = string(text)
	}
	return (*texts)[v]
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
	row := make([]string, len(syntheticColumns))
	for i := range s.rows {
		r := syntheticRow{age: uint8(18 + rng.IntN(73))}
		if rng.Float64() >= 0.08 {
			text := strconv.AppendFloat(buf[:0], math.Max(5, 50+15*rng.NormFloat64()), 'f', 1, 64)
			r.income = uint32(digits(text)) + 1
			intern(&s.texts.incomes, int(r.income), text)
		}
		text := strconv.AppendFloat(buf[:0], 10*rng.Float64(), 'f', 2, 64)
		r.tenure = uint16(digits(text))
		intern(&s.texts.tenures, int(r.tenure), text)
		plan := 3
		if rng.Float64() >= 0.05 {
			plan = rng.IntN(3)
		}
		r.levels = uint8(rng.IntN(len(regions))<<3 | plan<<1)
		intern(&s.texts.ages, int(r.age), strconv.AppendInt(buf[:0], int64(r.age), 10))
		if rng.Float64() < 1/(1+math.Exp(-syntheticLogit(s.text(r, row)))) {
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
		income = s.texts.incomes[r.income]
	}
	return append(dst[:0], s.texts.ages[r.age], income, s.texts.tenures[r.tenure],
		regions[r.levels>>3], plans[r.levels>>1&3], labels01[r.levels&1])
}

// syntheticLogit returns the true log-odds of a Synthetic row.
func syntheticLogit(row []string) float64 {
	age, _ := strconv.ParseFloat(row[0], 64)
	tenure, _ := strconv.ParseFloat(row[2], 64)
	z := -1.3 + 0.04*(age-45) - 0.15*tenure + regionEffect[row[3]] + planEffect[row[4]]
	if income, err := strconv.ParseFloat(row[1], 64); err == nil {
		z += 0.7 * (income - 50) / 15
	} else {
		z += 0.5
	}
	return z
}
