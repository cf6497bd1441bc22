package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/fedecdf/fedecdf/internal/logreg"
)

// DefaultTestFraction is the default SplitOptions.TestFraction. dp-ecdf §6
// does not state how it split its data; 0.3 (a 70/30 split) is our choice.
const DefaultTestFraction = 0.3

// splitStream is the PCG stream of Split ("split" in ASCII), so that the
// same seed elsewhere draws a different sequence.
const splitStream = 0x73706c6974

// SplitOptions configures ScoreTable.
type SplitOptions struct {
	// TestFraction is the share of rows held out for testing, in (0, 1);
	// zero means DefaultTestFraction.
	TestFraction float64
	// Seed fixes the random split.
	Seed uint64
	// Drop and MaxLevels are passed to fitEncoder (encoderOptions).
	Drop      []string
	MaxLevels int
	// Model configures the logistic regression (zero: scikit-learn's
	// defaults).
	Model logreg.Options
}

// split returns a seeded random partition of the row indices 0..n−1 into a
// training and a test set of ⌈testFraction·n⌉ rows (as scikit-learn's
// train_test_split), both sorted. Both parts must be non-empty.
func split(n int, testFraction float64, seed uint64) (train, test []int, err error) {
	if !(testFraction > 0 && testFraction < 1) {
		return nil, nil, fmt.Errorf("test fraction %v is not in (0, 1)", testFraction)
	}
	nTest := int(math.Ceil(testFraction * float64(n)))
	if nTest < 1 || nTest >= n {
		return nil, nil, fmt.Errorf("cannot split %d rows into non-empty training and test sets with test fraction %v", n, testFraction)
	}
	perm := rand.New(rand.NewPCG(seed, splitStream)).Perm(n)
	test, train = perm[:nTest], perm[nTest:]
	slices.Sort(test)
	slices.Sort(train)
	return train, test, nil
}

// Scored is the output of ScoreTable: a logistic regression's predicted
// probabilities on the held-out test rows, with their labels; the input of
// the private ROC curve and Hosmer–Lemeshow statistic.
type Scored struct {
	// Scores[i] is the predicted probability of the positive class for
	// test row TestRows[i]; Labels[i] is its 0/1 label.
	Scores   []float64
	Labels   []int
	TestRows []int
	// TrainSize and TestSize count the rows of each split.
	TrainSize, TestSize int
	// Accuracy (threshold 1/2) and AUC are measured on the test rows.
	Accuracy, AUC float64
	Model         *logreg.Model
	Encoder       *Encoder
	// rowLabels are the 0/1 labels of every row of the table, for
	// ScoreRows.
	rowLabels []int
}

// ScoreRows scores every row of t, the table s was trained on (training
// rows included: in-sample for those), and returns the predicted
// probabilities with the rows' labels.
func (s *Scored) ScoreRows(t *Table) ([]float64, []int, error) {
	if t.numRows() != len(s.rowLabels) {
		return nil, nil, fmt.Errorf("%s: %d rows, the scored table had %d", t.Name, t.numRows(), len(s.rowLabels))
	}
	scores := make([]float64, t.numRows())
	x := make([]float64, s.Encoder.Dim())
	var buf []string
	for i := range scores {
		var err error
		buf = t.row(i, buf)
		if x, err = s.Encoder.encode(buf, x); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", t.where(i), err)
		}
		scores[i] = s.Model.Predict(x)
	}
	return scores, slices.Clone(s.rowLabels), nil
}

// ScoreTable splits t at random (opts), trains a logistic regression on the
// training rows to predict labelCol, and scores the test rows. positive
// names the positive class as for ReadScored: "" for a 0/1 column, "v" for
// label = 1 iff the value is v, "!v" for label = 1 iff it is not v. The
// features are encoded by an Encoder fit on the training rows only. Every
// row must have one field per column.
func ScoreTable(t *Table, labelCol, positive string, opts SplitOptions) (*Scored, error) {
	lc, err := t.column(labelCol)
	if err != nil {
		return nil, err
	}
	rule := newLabelRule(positive)
	labels := make([]int, t.numRows())
	var buf []string
	for i := range labels {
		row := t.row(i, buf)
		buf = row
		if len(row) != len(t.Columns) {
			return nil, fmt.Errorf("%s: %d fields, the header has %d", t.where(i), len(row), len(t.Columns))
		}
		if labels[i], err = rule.label(row[lc]); err != nil {
			return nil, fmt.Errorf("%s: column %q: %v", t.where(i), labelCol, err)
		}
	}
	if err := rule.check(labelCol); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	fraction := opts.TestFraction
	if fraction == 0 {
		fraction = DefaultTestFraction
	}
	train, test, err := split(t.numRows(), fraction, opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", t.Name, err)
	}
	enc, err := fitEncoder(t, train, encoderOptions{Label: labelCol, Drop: opts.Drop, MaxLevels: opts.MaxLevels})
	if err != nil {
		return nil, err
	}
	encode, encodeErr := enc.rowEncoder(t, train)
	model, err := logreg.FitRows(len(train), encode, pick(labels, train), opts.Model)
	if *encodeErr != nil {
		return nil, *encodeErr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: training on %d rows: %w", t.Name, len(train), err)
	}
	s := &Scored{
		Scores:    make([]float64, len(test)),
		Labels:    pick(labels, test),
		TestRows:  test,
		TrainSize: len(train),
		TestSize:  len(test),
		Model:     model,
		Encoder:   enc,
		rowLabels: labels,
	}
	x := make([]float64, enc.Dim())
	var correct int
	for k, i := range test {
		buf = t.row(i, buf)
		if x, err = enc.encode(buf, x); err != nil {
			return nil, fmt.Errorf("%s: %v", t.where(i), err)
		}
		s.Scores[k] = model.Predict(x)
		if (s.Scores[k] >= 0.5) == (s.Labels[k] == 1) {
			correct++
		}
	}
	s.Accuracy = float64(correct) / float64(len(test))
	if s.AUC, err = AUC(s.Scores, s.Labels); err != nil {
		return nil, fmt.Errorf("%s: test rows: %w", t.Name, err)
	}
	return s, nil
}

// pick returns v[i] for each i in rows.
func pick(v []int, rows []int) []int {
	out := make([]int, len(rows))
	for k, i := range rows {
		out[k] = v[i]
	}
	return out
}

// AUC returns the exact area under the ROC curve of scores for labels
// (1 positive, 0 negative): the probability that a random positive scores
// above a random negative, ties counting one half (the Mann–Whitney
// statistic U/(n₊·n₋), computed from mid-ranks in O(n log n)).
func AUC(scores []float64, labels []int) (float64, error) {
	if len(scores) != len(labels) {
		return 0, fmt.Errorf("%d scores but %d labels", len(scores), len(labels))
	}
	order := make([]int, len(scores))
	var positives int
	for i := range order {
		order[i] = i
		if math.IsNaN(scores[i]) {
			return 0, fmt.Errorf("score %d is NaN", i)
		}
		switch labels[i] {
		case 0:
		case 1:
			positives++
		default:
			return 0, fmt.Errorf("label %d of score %d is not 0 or 1", labels[i], i)
		}
	}
	negatives := len(scores) - positives
	if positives == 0 || negatives == 0 {
		return 0, errors.New("AUC needs both positive and negative labels")
	}
	sort.Slice(order, func(a, b int) bool { return scores[order[a]] < scores[order[b]] })
	// Sum of the (1-based, mid-) ranks of the positives.
	var rankSum float64
	for lo := 0; lo < len(order); {
		hi := lo
		var tiedPositives int
		for ; hi < len(order) && scores[order[hi]] == scores[order[lo]]; hi++ {
			tiedPositives += labels[order[hi]]
		}
		midRank := float64(lo+hi+1) / 2
		rankSum += midRank * float64(tiedPositives)
		lo = hi
	}
	p, n := float64(positives), float64(negatives)
	return (rankSum - p*(p+1)/2) / (p * n), nil
}
