package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// stderrIsTerminal says whether standard error is a terminal, where a
// progress bar can redraw itself.
func stderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newProgress returns a progress display on standard error: a bar (or a
// spinner for phases of unknown length) on a terminal, one line per
// finished phase otherwise when verbose is set (long runs whose output is
// redirected), and nothing else.
func newProgress(verbose bool) *progress {
	switch {
	case stderrIsTerminal():
		return &progress{w: os.Stderr, bars: true}
	case verbose:
		return &progress{w: os.Stderr}
	}
	return nil
}

// progress implements simulate.Progress and experiment.Progress.
type progress struct {
	w     io.Writer
	bars  bool
	bar   *progressbar.ProgressBar
	phase string
	start time.Time
}

func (p *progress) Start(phase string, total int) {
	if p == nil {
		return
	}
	p.phase, p.start = phase, time.Now()
	if !p.bars {
		return
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(phase),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(total > 0),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func (p *progress) Add(k int) {
	if p != nil && p.bar != nil {
		_ = p.bar.Add(k)
	}
}

func (p *progress) Finish() {
	if p == nil {
		return
	}
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
	fmt.Fprintf(p.w, "fedecdf: %s done in %.2f s\n", p.phase, time.Since(p.start).Seconds())
}
