package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	ma "github.com/multiformats/go-multiaddr"
	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/server"
)

// serverOptions are the flags of "fedecdf server".
type serverOptions struct {
	role, key, manifest, store, logLevel string
	listen                               []string
	acceptBudgetChange                   bool
}

// newServerCommand builds the "server" command.
func newServerCommand() *cobra.Command {
	var o serverOptions
	cmd := &cobra.Command{
		Use:   "server --role leader|helper --key FILE --manifest FILE --listen MULTIADDR --store FILE",
		Short: "Run the leader or the helper: accept reports, persist them, answer releases until SIGINT/SIGTERM",
		Long: `server runs one of the two non-colluding servers of the manifest: the leader
or the helper, as --role says, under the identity in --key. It accepts the
parties' reports, stores them and its budget ledger in --store (a bbolt
file, kept across restarts), and answers the analysts' releases within the
manifest's privacy policy and budget, until SIGINT or SIGTERM. Logs go to
standard error.

Start the helper first, then the leader. The leader compares its manifest
with the helper's (a digest of the dataset, grid, policy, budget, minimum
reports, keys and analysts) when it starts, every 30 s and before every
release: on a difference the leader does not start (or, later, both
servers refuse uploads, releases and queries), naming the parts that
differ, e.g. "manifest mismatch with the helper: grid differ". A helper
that is not up yet is only logged; the leader checks again.

The store remembers the total budget its ledger is kept under. A manifest
with another total budget over a store that has charged a release is
refused unless --accept-budget-change is given (then logged at WARN with
the old and the new budget); give it to both servers, which run the same
manifest.`,
		Example: `  # The two servers of the manifest made in fedecdf manifest --help, each
  # in a terminal of its own (or with & at the end)
  fedecdf server --role leader --key leader.key --manifest manifest.json --listen /ip4/127.0.0.1/tcp/4001 --store leader.db
  fedecdf server --role helper --key helper.key --manifest manifest.json --listen /ip4/127.0.0.1/tcp/4002 --store helper.db`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.StringVar(&o.role, "role", "", "leader or helper")
	f.StringVar(&o.key, "key", "", "the server's key file (keygen)")
	f.StringVar(&o.manifest, "manifest", "manifest.json", "deployment manifest")
	f.StringSliceVar(&o.listen, "listen", nil, "multiaddr to listen on, e.g. /ip4/0.0.0.0/tcp/4001 (repeatable)")
	f.StringVar(&o.store, "store", "", "bbolt file holding accepted reports and the budget ledger")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.BoolVar(&o.acceptBudgetChange, "accept-budget-change", false, "start although the manifest's total budget differs from the one the store's ledger was kept under (logged at WARN)")
	return cmd
}

// run starts the server and serves until the context ends or a signal
// arrives.
func (o *serverOptions) run(cmd *cobra.Command, _ []string) error {
	logger, err := newLogger(cmd.ErrOrStderr(), o.logLevel)
	if err != nil {
		return err
	}
	cfg, err := o.config(logger)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := deploy.StartServer(cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	logger.Info("shutting down", "role", o.role)
	return s.Close()
}

// config checks the flags and reads the key and the manifest.
func (o *serverOptions) config(logger *slog.Logger) (deploy.ServerConfig, error) {
	cfg := deploy.ServerConfig{Store: o.store, Logger: logger, AcceptBudgetChange: o.acceptBudgetChange}
	switch o.role {
	case "leader":
		cfg.Role = server.Leader
	case "helper":
		cfg.Role = server.Helper
	default:
		return cfg, fmt.Errorf("--role %q: want leader or helper", o.role)
	}
	if o.key == "" {
		return cfg, fmt.Errorf("--key is required: the %s's key file (fedecdf keygen --out %s.key)", o.role, o.role)
	}
	if o.store == "" {
		return cfg, fmt.Errorf("--store is required: the file holding the %s's reports and budget ledger, e.g. --store %s.db", o.role, o.role)
	}
	var err error
	if cfg.Identity, err = deploy.ReadIdentity(o.key); err != nil {
		return cfg, fmt.Errorf("--key: %w", err)
	}
	if cfg.Manifest, err = deploy.ReadManifest(o.manifest); err != nil {
		return cfg, err
	}
	for _, s := range o.listen {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return cfg, fmt.Errorf("--listen %q: %w", s, err)
		}
		cfg.Listen = append(cfg.Listen, a)
	}
	if len(cfg.Listen) == 0 {
		return cfg, fmt.Errorf("--listen: no address given")
	}
	return cfg, nil
}

// newLogger returns a text slog logger writing to w at the named level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
