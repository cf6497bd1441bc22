package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/ui"
)

// uiFlags are the flags of fedecdf ui.
type uiFlags struct {
	analystFlags
	listen                   string
	public                   bool
	files                    []string
	method                   string
	groups, bootstrap, draws int
	timeout                  time.Duration
}

// newUICommand builds the "ui" command.
func newUICommand() *cobra.Command {
	var o uiFlags
	cmd := &cobra.Command{
		Use:   "ui [--manifest FILE --key FILE] [--file RESULT.json]... [--listen 127.0.0.1:8080]",
		Short: "Serve the analyst's web view: dataset, budget, releases, a form creating one, and each release's charts and tables",
		Long: `ui serves, on this machine, web pages of a deployment seen under an
analyst's key (--manifest, --key): the dataset's policy, the budget spent
and left and the servers' report counts and errors (fedecdf status); the
releases, and a form creating one (ECDF, or ROC with the Hosmer–Lemeshow
test) that shows its exact cost and the budget after it and asks for
confirmation, charged exactly as fedecdf query charges it; and each
release's results — ECDF with its 95 % band and quantile intervals, ROC and
PR curves with the ROC band and both AUC intervals, the calibration chart
with the noise-aware and the naive p-value — as charts (SVG, PNG) and
tables, with the numbers downloadable as JSON (docs/json.md) and CSV.
It also opens fedecdf simulate --format json and query --format json
files (--file, or the "Open a file" page), with or without a deployment.

The key stays in this process: the pages never receive it, load nothing
from elsewhere (Content-Security-Policy), and every request that spends
budget is a POST carrying the session's CSRF token from a page of this
server. Since whoever reaches the pages spends the budget, ui listens on a
loopback address only, unless --listen-public.`,
		Example: `  # The view of a deployment, at http://127.0.0.1:8080/
  fedecdf ui --manifest manifest.json --key analyst.key

  # The same views of a result file, without a deployment: roc.json as
  # written by "query --out results roc" (or saved simulate/query JSON)
  fedecdf ui --file results/roc.json --listen 127.0.0.1:8081`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.manifest, "manifest", "manifest.json", "deployment manifest (with --key)")
	f.StringVar(&o.key, "key", "", "the analyst's key file (keygen), whose peer ID the manifest lists; without it, only --file and the Open a file page")
	f.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to serve the pages on, host:port (a loopback address unless --listen-public; port 0: any free port)")
	f.BoolVar(&o.public, "listen-public", false, "allow a non-loopback --listen: anyone reaching it can spend the budget")
	f.StringSliceVar(&o.files, "file", nil, "fedecdf simulate or query --format json files to open (repeatable, or comma-separated)")
	f.StringVar(&o.method, "smooth", "l2", "smoothing of the private curves: "+strings.Join(smooth.Methods, ", "))
	f.IntVar(&o.groups, "groups", analysis.HosmerGroups, "number Q of Hosmer–Lemeshow quantile groups (at least 3)")
	f.IntVar(&o.bootstrap, "bootstrap", hosmer.DefaultNullDraws, "number B of simulated null data sets for the noise-aware p-value (negative: none)")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "give up on a call to the servers after this long")
	addIntervalDrawsFlag(cmd, &o.draws)
	return cmd
}

// errPublicListen refuses a non-loopback --listen without --listen-public.
var errPublicListen = errors.New("is not a loopback address: whoever reaches the pages spends the analyst's budget; add --listen-public to serve it anyway")

// checkListen refuses a non-loopback address unless public, and warns
// when it is allowed.
func (o *uiFlags) checkListen(cmd *cobra.Command) error {
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port: %w", o.listen, err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	if !o.public {
		return fmt.Errorf("--listen %s %w", o.listen, errPublicListen)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "fedecdf ui: WARNING: serving on %s, not a loopback address: anyone who reaches it can spend the budget under your key\n", o.listen)
	return nil
}

func (o *uiFlags) run(cmd *cobra.Command, _ []string) error {
	if err := o.checkListen(cmd); err != nil {
		return err
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout %v: want a positive duration such as 1m", o.timeout)
	}
	cfg := ui.Config{Timeout: o.timeout}
	if o.key != "" {
		m, id, tc, err := o.load(cmd, "analyst")
		if err != nil {
			return err
		}
		cfg.Logger = tc.Logger
		probs, err := queryProbabilities([]string{"ecdf"})
		if err != nil {
			return err
		}
		d, err := ui.NewDeployment(m, id, tc, ui.Options{Smoothing: o.method, Quantiles: probs, Groups: o.groups, Bootstrap: o.bootstrap, IntervalDraws: o.draws})
		if err != nil {
			return err
		}
		defer d.Close()
		cfg.Deployment = d
	} else if len(o.files) == 0 {
		return fmt.Errorf("--key is required for a deployment's view (the analyst's key file), or give --file RESULT.json")
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	defer ln.Close()
	cfg.Addr = ln.Addr().String()
	s, err := ui.New(cfg)
	if err != nil {
		return err
	}
	for _, path := range o.files {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--file: %w", err)
		}
		if _, err := s.AddFile(filepath.Base(path), data); err != nil {
			return fmt.Errorf("--file: %w", err)
		}
	}
	return serveUI(cmd, ln, s)
}

// serveUI serves s on ln until the command's context ends or a signal
// stops it.
func serveUI(cmd *cobra.Command, ln net.Listener, s http.Handler) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(cmd.OutOrStdout(), "fedecdf ui: serving http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// Requests in flight get 5 s to finish (a page waiting on a server
	// that stopped first may take longer); then the connections close:
	// stopping was asked for, so that is no error.
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return srv.Close()
}
