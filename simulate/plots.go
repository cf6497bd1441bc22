package simulate

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedecdf/fedecdf/internal/plot"
)

// WritePlots draws the report's curves as PNG files in dir (created if
// missing) and returns their paths: ecdf.png, the true, private and
// smoothed ECDF of the scores.
func (r *Report) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plot directory: %w", err)
	}
	charts := map[string]*plot.Chart{"ecdf.png": r.ecdfChart()}
	var paths []string
	for _, name := range []string{"ecdf.png"} {
		path := filepath.Join(dir, name)
		if err := charts[name].Save(path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func (r *Report) ecdfChart() *plot.Chart {
	return &plot.Chart{
		Title:  fmt.Sprintf("ECDF of the scores, n = %d, %s, ε = %g", r.N, r.Mechanism, r.Epsilon),
		XLabel: "score threshold τ", YLabel: "F(τ)", Legend: plot.TopLeft,
		Series: []plot.Series{
			{Name: "true", X: r.Thresholds, Y: r.ECDF.True, Style: plot.Step},
			{Name: "private", X: r.Thresholds, Y: r.ECDF.Private, Style: plot.Step},
			{Name: "smoothed", X: r.Thresholds, Y: r.ECDF.Smoothed, Style: plot.Dashed},
		},
	}
}
