package experiment

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fedecdf/fedecdf/internal/plot"
)

// Figure is the outcome of one experiment: named series of points with
// the standard error of each mean over the runs.
type Figure struct {
	ID                    string // "fig4", …
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Series                []Series
	// Runs is the number of runs averaged per point.
	Runs int
	// Notes say what the figure leaves out or how to read it.
	Notes []string
	// Legend is the corner of the legend (plot.TopRight by default).
	Legend plot.Corner
	// Skipped says the figure was not computed (its data set is absent);
	// Notes say why. It has no series and Save writes nothing.
	Skipped bool
}

// Series is one curve of a Figure: Y[j] is the mean over the runs at
// X[j], StdErr[j] the standard error of that mean.
type Series struct {
	Name      string
	X, Y      []float64
	StdErr    []float64
	Dashed    bool // a theoretical curve, drawn dashed
	Mechanism string
	// Runs[j], when Runs is not nil, is the number of runs averaged at
	// X[j], if some runs gave no value there (else Figure.Runs).
	Runs []int
}

// WriteCSV writes f as the columns series, x, mean, stderr, runs.
func (f *Figure) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"series", f.XLabel, f.YLabel, "stderr", "runs"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, s := range f.Series {
		for j := range s.X {
			se := ""
			if s.StdErr != nil {
				se = g(s.StdErr[j])
			}
			runs := f.Runs
			if s.Runs != nil {
				runs = s.Runs[j]
			}
			cw.Write([]string{s.Name, g(s.X[j]), g(s.Y[j]), se, strconv.Itoa(runs)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// Save writes dir/ID.csv, dir/ID.png and, when f has notes,
// dir/ID.notes.txt, and returns their paths.
func (f *Figure) Save(dir string) ([]string, error) {
	if f.Skipped {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	csvPath := filepath.Join(dir, f.ID+".csv")
	out, err := os.Create(csvPath)
	if err != nil {
		return nil, err
	}
	if err := f.WriteCSV(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("%s: %w", csvPath, err)
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	paths := []string{csvPath, filepath.Join(dir, f.ID+".png")}
	if err := f.Chart().Save(paths[1]); err != nil {
		return nil, err
	}
	if len(f.Notes) > 0 {
		notesPath := filepath.Join(dir, f.ID+".notes.txt")
		if err := os.WriteFile(notesPath, []byte(strings.Join(f.Notes, "\n")+"\n"), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, notesPath)
	}
	return paths, nil
}

// Chart returns the plot of f.
func (f *Figure) Chart() *plot.Chart {
	c := &plot.Chart{Title: f.Title, XLabel: f.XLabel, YLabel: f.YLabel, LogX: f.LogX, LogY: f.LogY, Legend: f.Legend}
	for _, s := range f.Series {
		style := plot.Line
		if s.Dashed {
			style = plot.Dashed
		}
		c.Series = append(c.Series, plot.Series{Name: s.Name, X: s.X, Y: s.Y, StdErr: s.StdErr, Style: style})
	}
	return c
}

// meanSE accumulates a mean and its standard error.
type meanSE struct {
	n          int
	sum, sumSq float64
}

func (m *meanSE) add(v float64) { m.n++; m.sum += v; m.sumSq += v * v }

func (m *meanSE) mean() float64 { return m.sum / float64(m.n) }

// stderr is the sample standard deviation over √n (0 for one run).
func (m *meanSE) stderr() float64 {
	if m.n < 2 {
		return 0
	}
	mu := m.mean()
	v := (m.sumSq - float64(m.n)*mu*mu) / float64(m.n-1)
	return sqrt(max(v, 0) / float64(m.n))
}
