package simulate

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedecdf/fedecdf/internal/dataset"
)

// Data is what the parties hold: one score and label each, and, when the
// scores are predicted probabilities, the probability payload of the
// Hosmer–Lemeshow statistic.
type Data struct {
	// Source says where the scores come from.
	Source string `json:"source"`
	// Scores and Labels are the parties' instances, one per party.
	Scores []float64 `json:"-"`
	Labels []int     `json:"-"`
	// Probabilities says whether the scores are predicted probabilities
	// of the positive class (then they are also the parties' HL payload).
	Probabilities bool `json:"probabilities"`
	// Model describes the logistic regression that produced the scores,
	// when one was trained (built-in data, or a table without --score).
	Model *ModelSummary `json:"model,omitempty"`
}

// ModelSummary describes a logistic regression trained on the training
// split of a table and evaluated on its test split, whose rows become
// the parties.
type ModelSummary struct {
	TrainRows int      `json:"train_rows"`
	TestRows  int      `json:"test_rows"`
	Features  int      `json:"features"`
	Dropped   []string `json:"dropped_columns"`
	Accuracy  float64  `json:"accuracy"`
	AUC       float64  `json:"auc"`
}

// LoadData returns the parties' data for cfg:
//
//   - no cfg.Data: the built-in table (dataset.ScoreSynthetic) with enough rows
//     for cfg.Parties test rows, scored by a logistic regression trained on
//     the other rows;
//   - cfg.Data with cfg.ScoreCol: that score column and the label
//     (dataset.ReadScored); scores are probabilities iff the grid lies in
//     [0, 1];
//   - cfg.Data without cfg.ScoreCol: a table with a label column; a
//     logistic regression is trained on a seeded split (dataset.ScoreTable,
//     dropping cfg.Drop) and the test rows' predicted probabilities become
//     the parties' scores, as in dp-ecdf §6.1.
//
// With cfg.Parties > 0 only the first cfg.Parties instances are kept; more
// parties than instances is an error naming how many there are. The
// labels must hold both classes (checkClasses).
func LoadData(cfg Config) (*Data, error) {
	var d *Data
	var err error
	switch {
	case cfg.Data == "":
		if cfg.Parties < 1 {
			return nil, fmt.Errorf("number of parties %d is not positive", cfg.Parties)
		}
		rows := int(math.Ceil(float64(cfg.Parties)/testFraction(cfg))) + 1
		d, err = scored(dataset.ScoreSynthetic(rows, cfg.Seed, splitOptions(cfg)))
		if d != nil {
			d.Source = fmt.Sprintf("built-in synthetic table (%d rows, seed %d) → logistic regression → test-set probabilities", rows, cfg.Seed)
		}
	case cfg.ScoreCol != "":
		d = &Data{Source: fmt.Sprintf("%s: score column %q, label column %q", cfg.Data, cfg.ScoreCol, cfg.LabelCol)}
		var rows *dataset.ScoredRows
		if rows, err = dataset.ReadScoredRows(cfg.Data, cfg.ScoreCol, cfg.LabelCol, cfg.Positive, "", cfg.SkipMissing); err == nil {
			d.Scores, d.Labels = rows.Scores, rows.Labels
			if rows.Skipped > 0 {
				d.Source += fmt.Sprintf(" (%d row(s) with a missing score or label skipped, %d kept)", rows.Skipped, len(rows.Scores))
			}
		}
		d.Probabilities = cfg.Min >= 0 && cfg.Max <= 1
	default:
		var t *dataset.Table
		if t, err = dataset.ReadTable(cfg.Data, 0); err != nil {
			return nil, err
		}
		d, err = scored(dataset.ScoreTable(t, cfg.LabelCol, cfg.Positive, splitOptions(cfg)))
		if d != nil {
			d.Source = fmt.Sprintf("%s (%d rows) → logistic regression on label %q → test-set probabilities", cfg.Data, len(t.Rows), cfg.LabelCol)
		}
	}
	if err != nil {
		return nil, err
	}
	if cfg.Parties > len(d.Scores) {
		rows := "rows"
		if cfg.ScoreCol == "" {
			rows = fmt.Sprintf("test rows (the held-out %g of the table)", testFraction(cfg))
		}
		return nil, fmt.Errorf("%d parties asked for, but %s has only %d %s: ask for at most %d (or omit the number of parties for every row)", cfg.Parties, d.Source, len(d.Scores), rows, len(d.Scores))
	}
	if cfg.Parties > 0 {
		d.Scores, d.Labels = d.Scores[:cfg.Parties], d.Labels[:cfg.Parties]
	}
	if err := checkClasses(d.Labels, cfg); err != nil {
		return nil, err
	}
	return d, nil
}

// checkClasses refuses labels of one class only: the ROC and PR curves
// and the Hosmer–Lemeshow test need positives and negatives.
func checkClasses(labels []int, cfg Config) error {
	var pos int
	for _, y := range labels {
		pos += y
	}
	if pos > 0 && pos < len(labels) {
		return nil
	}
	class, rule := "negative", "0/1 labels, 1 positive"
	if pos > 0 {
		class = "positive"
	}
	switch {
	case strings.HasPrefix(cfg.Positive, "!"):
		rule = fmt.Sprintf("positive means a label other than %q", cfg.Positive[1:])
	case cfg.Positive != "":
		rule = fmt.Sprintf("positive means label %q", cfg.Positive)
	}
	return fmt.Errorf("all %d instances are %s (label column %q, %s): ROC, PR and Hosmer–Lemeshow need both classes; check the positive label value (case matters) or use other rows", len(labels), class, cfg.LabelCol, rule)
}

func testFraction(cfg Config) float64 {
	if cfg.TestFraction == 0 {
		return dataset.DefaultTestFraction
	}
	return cfg.TestFraction
}

// splitOptions are the options of the logistic regression on a table.
func splitOptions(cfg Config) dataset.SplitOptions {
	return dataset.SplitOptions{TestFraction: cfg.TestFraction, Seed: cfg.Seed, Drop: cfg.Drop}
}

// scored keeps the test rows of a table scored by a logistic regression
// (dataset.ScoreTable).
func scored(s *dataset.Scored, err error) (*Data, error) {
	if err != nil {
		return nil, err
	}
	m := &ModelSummary{TrainRows: s.TrainSize, TestRows: s.TestSize, Features: s.Encoder.Dim(), Accuracy: s.Accuracy, AUC: s.AUC}
	for _, c := range s.Encoder.Dropped {
		m.Dropped = append(m.Dropped, c.Name)
	}
	return &Data{Scores: s.Scores, Labels: s.Labels, Probabilities: true, Model: m}, nil
}
