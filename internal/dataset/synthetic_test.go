package dataset

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSyntheticKnownAnswer pins the built-in data: the SHA-256 of the
// rows of Synthetic tables, one comma-joined line each, as the first
// generator (which held every field as its own string) drew them.
// Changing the stream changes every simulation on the built-in data.
func TestSyntheticKnownAnswer(t *testing.T) {
	for _, c := range []struct {
		n    int
		seed uint64
		hash string
	}{
		{1000, 1, "2e5a5aa6bd4fa317537ee56f7c946e06405659c5f44dc596ad40d0c449203ef5"},
		{300000, 7, "50959b856b23a7d3c7580b4c8a4d705fa8c8b1bbb5fc84eb6924296f27cd3340"},
	} {
		t.Run(fmt.Sprintf("n=%d,seed=%d", c.n, c.seed), func(t *testing.T) {
			h := sha256.New()
			for _, row := range Synthetic(c.n, c.seed).Rows {
				h.Write([]byte(strings.Join(row, ",") + "\n"))
			}
			if got := fmt.Sprintf("%x", h.Sum(nil)); got != c.hash {
				t.Errorf("rows hash to %s, want %s", got, c.hash)
			}
		})
	}
}

// TestScoreSyntheticIsScoreTable: scoring the table held as numbers gives
// ScoreTable's result on the table held as text, bit for bit.
func TestScoreSyntheticIsScoreTable(t *testing.T) {
	opts := SplitOptions{Seed: 3}
	want, err := ScoreTable(Synthetic(5000, 2), SyntheticLabel, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ScoreSynthetic(5000, 2, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Scores, want.Scores) || !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.TestRows, want.TestRows) ||
		got.Model.Intercept != want.Model.Intercept || !slices.Equal(got.Model.Coef, want.Model.Coef) || got.AUC != want.AUC {
		t.Errorf("ScoreSynthetic: model %+v, AUC %v; ScoreTable on the text: model %+v, AUC %v", got.Model, got.AUC, want.Model, want.AUC)
	}
}
