package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// timingSamples is the number of timing samples per method and N in
// Fig. 7, and timingBatch the least duration of one sample.
const (
	timingSamples = 5
	timingBatch   = 20 * time.Millisecond
)

// Fig7 reproduces dp-ecdf Fig. 7 (§6.7), the time to smooth one release
// against N, for each smoothing method on a tree release (ε = 1) of
// X_pois(λ) with N = cfg.Sizes values. It returns two figures measured
// in the same run: fig7, seconds per smoothing, and fig7-ratio, each
// method's time over that of the O(N) pointwise l2 (PAVA) on the same
// curve, which does not depend on the machine. The samples of the
// methods are interleaved, so a change in the machine's load hits all of
// them alike.
func Fig7(ctx context.Context, cfg Config) ([]*Figure, error) {
	cfg = cfg.withDefaults()
	abs := &Figure{ID: "fig7", Title: "Time to smooth one release (tree, ε=1, X_pois)", XLabel: "N", YLabel: "seconds", LogX: true, LogY: true, Runs: timingSamples}
	rel := &Figure{ID: "fig7-ratio", Title: "Smoothing time relative to pointwise l2 (PAVA), same run", XLabel: "N", YLabel: "time / time of l2", LogX: true, LogY: true, Runs: timingSamples}
	for _, method := range smoothingMethods {
		abs.Series = append(abs.Series, Series{Name: method})
		rel.Series = append(rel.Series, Series{Name: method + " / l2"})
	}
	pr := progress{cfg.Progress}
	pr.start("fig7", len(cfg.Sizes)*timingSamples)
	defer pr.finish()
	for _, n := range cfg.Sizes {
		hist, err := synthetic.PoissonHistogram(cfg.Lambda, n, cfg.Seed)
		if err != nil {
			return nil, err
		}
		m, err := newMechanism("tree", n, 1, cfg.Delta)
		if err != nil {
			return nil, err
		}
		p, err := release(m, hist)
		if err != nil {
			return nil, err
		}
		seconds, ratios, err := timeMethods(ctx, p.Curve(), m, pr)
		if err != nil {
			return nil, fmt.Errorf("fig7: N = %d: %w", n, err)
		}
		for k := range smoothingMethods {
			a, r := &abs.Series[k], &rel.Series[k]
			a.X, a.Y, a.StdErr = append(a.X, float64(n)), append(a.Y, seconds[k].mean()), append(a.StdErr, seconds[k].stderr())
			r.X, r.Y, r.StdErr = append(r.X, float64(n)), append(r.Y, ratios[k].mean()), append(r.StdErr, ratios[k].stderr())
		}
	}
	return []*Figure{abs, rel}, nil
}

// timeMethods times each smoothing method on raw, timingSamples times
// (interleaved), and returns its seconds per call and its time over that
// of l2 in the same sample.
func timeMethods(ctx context.Context, raw []float64, m mechanism.Mechanism, pr progress) (seconds, ratios []meanSE, err error) {
	seconds, ratios = make([]meanSE, len(smoothingMethods)), make([]meanSE, len(smoothingMethods))
	l2 := -1
	for k, method := range smoothingMethods {
		if method == "l2" {
			l2 = k
		}
	}
	for range timingSamples {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		sample := make([]float64, len(smoothingMethods))
		for k, method := range smoothingMethods {
			if sample[k], err = secondsPerCall(func() error { _, err := smooth.Apply(method, raw, m); return err }); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", method, err)
			}
			seconds[k].add(sample[k])
		}
		for k := range sample {
			ratios[k].add(sample[k] / sample[l2])
		}
		pr.add()
	}
	return seconds, ratios, nil
}

// secondsPerCall calls fn until timingBatch has passed (at least once)
// and returns the mean seconds per call.
func secondsPerCall(fn func() error) (float64, error) {
	calls, start := 0, time.Now()
	for calls == 0 || time.Since(start) < timingBatch {
		if err := fn(); err != nil {
			return 0, err
		}
		calls++
	}
	return time.Since(start).Seconds() / float64(calls), nil
}
