package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	ma "github.com/multiformats/go-multiaddr"
	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/deploy"
	"github.com/fedecdf/fedecdf/server"
)

func init() {
	var role, keyPath, manifestPath, storePath, logLevel string
	var listen []string
	cmd := &cobra.Command{
		Use:   "server --role leader|helper --key FILE --manifest FILE --listen MULTIADDR --store FILE",
		Short: "Run the leader or the helper: accept reports, persist them, answer releases until SIGINT/SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(logLevel)
			if err != nil {
				return err
			}
			cfg := deploy.ServerConfig{Store: storePath, Logger: logger}
			switch role {
			case "leader":
				cfg.Role = server.Leader
			case "helper":
				cfg.Role = server.Helper
			default:
				return fmt.Errorf("--role %q: want leader or helper", role)
			}
			if storePath == "" {
				return fmt.Errorf("--store: no store file given")
			}
			if cfg.Identity, err = deploy.ReadIdentity(keyPath); err != nil {
				return err
			}
			if cfg.Manifest, err = deploy.ReadManifest(manifestPath); err != nil {
				return err
			}
			for _, s := range listen {
				a, err := ma.NewMultiaddr(s)
				if err != nil {
					return fmt.Errorf("--listen %q: %w", s, err)
				}
				cfg.Listen = append(cfg.Listen, a)
			}
			if len(cfg.Listen) == 0 {
				return fmt.Errorf("--listen: no address given")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s, err := deploy.StartServer(cfg)
			if err != nil {
				return err
			}
			<-ctx.Done()
			logger.Info("shutting down", "role", role)
			return s.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&role, "role", "", "leader or helper")
	f.StringVar(&keyPath, "key", "", "the server's key file (keygen)")
	f.StringVar(&manifestPath, "manifest", "manifest.json", "deployment manifest")
	f.StringSliceVar(&listen, "listen", nil, "multiaddr to listen on, e.g. /ip4/0.0.0.0/tcp/4001 (repeatable)")
	f.StringVar(&storePath, "store", "", "bbolt file holding accepted reports and the budget ledger")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	rootCmd.AddCommand(cmd)
}

// newLogger returns a text slog logger on stderr at the named level.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
