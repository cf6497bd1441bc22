package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// isTerminal says whether w is a terminal, where a progress bar can
// redraw itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// addProgressFlag gives cmd the --progress flag, bound to verbose: the
// phases of a command that can run long are shown on standard error on
// a terminal anyway, and with --progress also when it is redirected.
func addProgressFlag(cmd *cobra.Command, verbose *bool) {
	cmd.Flags().BoolVar(verbose, "progress", false, "report each phase and its time on standard error also when it is not a terminal (on a terminal a bar or spinner shows anyway)")
}

// newProgress returns a progress display on w (a command's standard
// error): a bar (or a spinner for phases of unknown length) on a
// terminal, one line per finished phase otherwise when verbose is set
// (long runs whose output is redirected), and nothing else.
func newProgress(w io.Writer, verbose bool) *progress {
	switch {
	case isTerminal(w):
		return &progress{w: w, bars: true}
	case verbose:
		return &progress{w: w}
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
		progressbar.OptionSetRenderBlankState(total < 0),
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
