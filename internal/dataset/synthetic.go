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
	plans        = []string{"basic", "plus", "premium"}
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
	rng := rand.New(rand.NewPCG(seed, syntheticStream))
	t := &Table{Name: "synthetic", Columns: syntheticColumns, Rows: make([][]string, n)}
	for i := range t.Rows {
		age := 18 + rng.IntN(73)
		income := "?"
		if rng.Float64() >= 0.08 {
			income = strconv.FormatFloat(math.Max(5, 50+15*rng.NormFloat64()), 'f', 1, 64)
		}
		tenure := strconv.FormatFloat(10*rng.Float64(), 'f', 2, 64)
		plan := ""
		if rng.Float64() >= 0.05 {
			plan = plans[rng.IntN(len(plans))]
		}
		row := []string{strconv.Itoa(age), income, tenure, regions[rng.IntN(len(regions))], plan, "0"}
		if rng.Float64() < 1/(1+math.Exp(-syntheticLogit(row))) {
			row[5] = "1"
		}
		t.Rows[i] = row
	}
	return t
}

// syntheticStream is the PCG stream of Synthetic ("synth" in ASCII).
const syntheticStream = 0x73796e7468

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
