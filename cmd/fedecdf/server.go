package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	ma "github.com/multiformats/go-multiaddr"
	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/server"
)

// serverOptions are the flags of "fedecdf server".
type serverOptions struct {
	role, key, manifest, store, logLevel, logFormat, metrics string
	storePasswordFile                                        string
	cpuProfile, uploadListen                                 string
	uploadConns                                              int
	uploadTimeout                                            time.Duration
	uploadLimits                                             deploy.UploadLimits
	listen, queryListen                                      []string
	peerCheck, peerTimeout, summary, purgeAfter              time.Duration
	limits                                                   p2p.Limits
	acceptBudgetChange                                       bool
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
file, kept across restarts, or a PostgreSQL database named by a postgres://
DSN, its password in PGPASSWORD or --store-password-file, never in the DSN),
and answers the analysts' releases within the manifest's privacy policy and
budget, until SIGINT or SIGTERM.

Logs go to standard error, one line per event, as text (key=value) or JSON
(--log-format), at --log-level and above: each upload at debug; a summary of
the uploads, releases and queries of each --summary interval, releases and
queries at info; refused uploads and requests, refused connections, an
unreachable helper and reports held by this server only at warn, with the
reason; failures at error. The leader checks every --peer-check that it
reaches the helper.

Reports held by one server only (an upload that reached one server: the
helper down, say), received and not yet verified there and unknown to the
other, are never in a release; a report either server rejected is rejected
at both, and one verified at both never is one server's only. They are found when the
leader compares the two report sets (fedecdf status, and a periodic check
when the sets differ), logged and shown by fedecdf status. A party completes
its upload by running fedecdf party --input again with the same --row-key (the
server holding a row's report counts it once); --purge-orphans-after AGE
removes, at this server only, those received longer than AGE ago.

--metrics HOST:PORT serves Prometheus text-format metrics at /metrics:
reports accepted, duplicate, rejected and purged, releases and queries,
reports counted (verified), held (not yet verified) and held here only,
rejections at verification per reason, budget spent and total, and whether
the other server is reachable (set by the leader's start-up check). The same
listener serves the probes /healthz (200 while the process serves) and
/readyz (200 when the store is readable and, at the leader, the helper
answered the last check; 503 and the reason otherwise). An example systemd
unit is examples/fedecdf-server.service.

Connection limits (of the libp2p listener; the sealed-upload listener's
are the upload flags below): each party opens a connection or two, often
briefly, and many parties may share one IPv4 address (a NAT, or one
machine uploading for many). The server accepts --conns-per-address concurrent
connections from one address (an IPv4 address or an IPv6 /56), new ones
at --conn-rate per second after a burst of --conn-burst, and
--max-conns in all; loopback is not limited. Connections still in their
handshake (where no one, not even a manifest analyst, is known yet) are
held to --conns-per-address per address and --max-conns in all whatever
the address: when full, the oldest one a second old is closed to make
room, so idle connections from strangers never lock the analysts, the
operators or the other server out. A refused party sees its connection
reset during the handshake (and retries for its --retry-window); the
server logs "refused a connection" with the address. go-libp2p's own defaults (8 concurrent, 0.2 per second after 16)
would refuse most parties behind one address.

Sealed uploads: when the manifest gives this server an upload_addr
(fedecdf manifest --leader-upload, --helper-upload), the server also
listens there (or on --upload-listen, e.g. 0.0.0.0:PORT; each process
of a server run by several gives its own, listed in the manifest) for
parties' uploads over plain TCP, one frame per connection, HPKE-sealed to its key:
a frame that is malformed or too large for the manifest's reports
closes its connection. They are stored and acknowledged as the uploads
over libp2p are. Every connection is accepted at once (the kernel's
backlog never fills) and admitted per client address (an IPv4 address
or an IPv6 /56): beyond --upload-rate new connections per second after a
burst of --upload-burst it is closed at once; an address may have
--upload-conns-per-address connections waiting for their frame, and the
listener --upload-conns in all; when full, the oldest waiting connection
is closed to make room if it has waited a second, otherwise the new one
is. A connection whose frame has not started after
--upload-header-timeout, or not ended after --upload-timeout, is closed;
one whose frame is read stops waiting at once. So one client, whatever it
does, holds at most --upload-conns-per-address places, each for at most
--upload-header-timeout, and cannot keep out the parties of other
addresses; parties at its own address share its rate and get a place
whenever they connect within it (with --upload-burst + --upload-rate
below --upload-conns-per-address, as by default). A party whose
connection is closed retries within its --retry-window. Dropped
connections are logged at WARN at most 5 times per address every 10 s,
then as one "more connection warnings suppressed" line.

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
  fedecdf server --role helper --key helper.key --manifest manifest.json --listen /ip4/127.0.0.1/tcp/4002 --store helper.db

  # A leader whose 5000 parties upload at once from behind one NAT address
  fedecdf server --role leader --key leader.key --manifest manifest.json --listen /ip4/0.0.0.0/tcp/4001 --store leader.db \
    --conns-per-address 5000 --conn-burst 5000 --max-conns 8192

  # JSON logs with every upload, metrics for Prometheus, and the reports
  # only this server holds purged once a day old
  fedecdf server --role leader --key leader.key --manifest manifest.json --listen /ip4/127.0.0.1/tcp/4001 --store leader.db \
    --log-format json --log-level debug --metrics 127.0.0.1:9090 --purge-orphans-after 24h`,
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	cmd.AddCommand(newQuarantineCommand())
	f := cmd.Flags()
	f.StringVar(&o.role, "role", "", "leader or helper")
	f.StringVar(&o.key, "key", "", "the server's key file (keygen)")
	f.StringVar(&o.manifest, "manifest", "manifest.json", "deployment manifest")
	f.StringSliceVar(&o.listen, "listen", nil, "multiaddr to listen on, e.g. /ip4/0.0.0.0/tcp/4001 (repeatable)")
	f.StringSliceVar(&o.queryListen, "query-listen", nil, "leader on a shared postgres:// --store: multiaddr on which this process, while it stands by, answers analysts' reads of existing releases, e.g. /ip4/0.0.0.0/tcp/4101 (repeatable; not in the manifest)")
	f.StringVar(&o.store, "store", "", "bbolt file holding accepted reports and the budget ledger, or a postgres:// DSN (no password in it)")
	f.StringVar(&o.storePasswordFile, "store-password-file", "", "file (mode 0600) holding the PostgreSQL password of a postgres:// --store (else PGPASSWORD)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug (every upload), info, warn or error")
	f.StringVar(&o.logFormat, "log-format", "text", "log format: "+strings.Join(deploy.LogFormats, " or ")+" (one line per event)")
	f.StringVar(&o.metrics, "metrics", "", "serve Prometheus text-format metrics at http://HOST:PORT/metrics and the probes /healthz and /readyz, e.g. 127.0.0.1:9090 (default: none)")
	f.DurationVar(&o.peerCheck, "peer-check", deploy.DefaultPeerCheck, "leader: interval of its checks of the helper: same manifest, reachable, report sets")
	f.DurationVar(&o.peerTimeout, "peer-timeout", deploy.DefaultPeerTimeout, "leader: how long a check of the helper, or the helper's part of fedecdf status, may take")
	f.DurationVar(&o.summary, "summary", deploy.DefaultSummary, "interval of the info line summarising uploads, releases and queries (0: none)")
	f.DurationVar(&o.purgeAfter, "purge-orphans-after", 0, "purge the reports only this server holds once received longer ago than this, e.g. 24h (default 0: keep them)")
	f.StringVar(&o.uploadListen, "upload-listen", "", "HOST:PORT of the sealed-upload listener, e.g. 0.0.0.0:7401 (default: the server's upload_addr in the manifest, its first if it lists several; none if it has none)")
	f.DurationVar(&o.uploadTimeout, "upload-timeout", deploy.DefaultUploadTimeout, "how long a sealed upload's frame may take to arrive, and its answer to be sent")
	f.IntVar(&o.uploadConns, "upload-conns", deploy.DefaultUploadConns, "sealed-upload connections waiting for their frame in all, and frames handled at once (see Sealed uploads above)")
	f.IntVar(&o.uploadLimits.ConnsPerAddr, "upload-conns-per-address", deploy.DefaultUploadConnsPerAddr, "sealed-upload connections waiting for their frame from one IPv4 address or IPv6 /56")
	f.Float64Var(&o.uploadLimits.Rate, "upload-rate", deploy.DefaultUploadRate, "new sealed-upload connections per second accepted from one address once its --upload-burst is spent")
	f.IntVar(&o.uploadLimits.Burst, "upload-burst", deploy.DefaultUploadBurst, "new sealed-upload connections one address may open at once before --upload-rate applies")
	f.DurationVar(&o.uploadLimits.HeaderTimeout, "upload-header-timeout", deploy.DefaultUploadHeaderTimeout, "how long a sealed-upload connection may wait before its frame starts (the whole frame: --upload-timeout)")
	f.StringVar(&o.cpuProfile, "cpu-profile", "", "write a CPU profile of the whole run to this file on shutdown (go tool pprof)")
	f.IntVar(&o.limits.ConnsPerAddr, "conns-per-address", p2p.DefaultConnsPerAddr, "concurrent connections accepted from one IPv4 address or IPv6 /56 (parties behind one NAT share it)")
	f.Float64Var(&o.limits.ConnRate, "conn-rate", p2p.DefaultConnRate, "new connections per second accepted from one address once its --conn-burst is spent")
	f.IntVar(&o.limits.ConnBurst, "conn-burst", p2p.DefaultConnBurst, "new connections one address may open at once before --conn-rate applies")
	f.IntVar(&o.limits.Conns, "max-conns", p2p.DefaultConns, "concurrent inbound connections from all addresses")
	f.BoolVar(&o.acceptBudgetChange, "accept-budget-change", false, "start although the manifest's total budget differs from the one the store's ledger was kept under (logged at WARN)")
	return cmd
}

// run starts the server and serves until the context ends or a signal
// arrives.
func (o *serverOptions) run(cmd *cobra.Command, _ []string) error {
	logger, err := deploy.NewLogger(cmd.ErrOrStderr(), o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	cfg, err := o.config(logger)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	s, err := deploy.StartServer(cfg)
	if err != nil {
		return errors.Join(err, stopProfile())
	}
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "role", o.role)
		return errors.Join(s.Close(), stopProfile())
	case err := <-s.Failed():
		return errors.Join(err, s.Close(), stopProfile())
	}
}

// startCPUProfile starts a CPU profile into path (nothing if empty); stop
// ends it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// config checks the flags and reads the key and the manifest.
func (o *serverOptions) config(logger *slog.Logger) (deploy.ServerConfig, error) {
	cfg := deploy.ServerConfig{
		Store: o.store, StorePasswordFile: o.storePasswordFile, Logger: logger, Version: version(), Metrics: o.metrics, Transport: p2p.Config{Limits: o.limits},
		AcceptBudgetChange: o.acceptBudgetChange,
		UploadListen:       o.uploadListen, UploadTimeout: o.uploadTimeout, UploadConns: o.uploadConns, UploadLimits: o.uploadLimits,
		PeerCheck: o.peerCheck, PeerTimeout: o.peerTimeout, Summary: never(o.summary), PurgeAfter: o.purgeAfter,
	}
	for name, d := range map[string]time.Duration{"--peer-check": o.peerCheck, "--peer-timeout": o.peerTimeout, "--summary": o.summary, "--purge-orphans-after": o.purgeAfter, "--upload-timeout": o.uploadTimeout, "--upload-header-timeout": o.uploadLimits.HeaderTimeout} {
		if d < 0 || (d == 0 && (name == "--peer-check" || name == "--peer-timeout" || name == "--upload-timeout" || name == "--upload-header-timeout")) {
			return cfg, fmt.Errorf("%s %v: want a positive duration such as 30s", name, d)
		}
	}
	switch o.role {
	case "leader":
		cfg.Role = server.Leader
	case "helper":
		cfg.Role = server.Helper
	default:
		return cfg, fmt.Errorf("--role %q: want leader or helper", o.role)
	}
	if err := o.checkLimits(); err != nil {
		return cfg, err
	}
	if o.key == "" {
		return cfg, fmt.Errorf("--key is required: the %s's key file (fedecdf keygen --output %s.key)", o.role, o.role)
	}
	if o.store == "" {
		return cfg, fmt.Errorf("--store is required: the file holding the %s's reports and budget ledger, e.g. --store %s.db", o.role, o.role)
	}
	var err error
	if cfg.Identity, err = manifest.ReadIdentity(o.key); err != nil {
		return cfg, fmt.Errorf("--key: %w", err)
	}
	if cfg.Manifest, err = manifest.ReadManifest(o.manifest); err != nil {
		return cfg, err
	}
	if cfg.Listen, err = multiaddrs("--listen", o.listen); err != nil {
		return cfg, err
	}
	if cfg.QueryListen, err = multiaddrs("--query-listen", o.queryListen); err != nil {
		return cfg, err
	}
	if len(cfg.QueryListen) > 0 && (o.role != "leader" || !store.IsPostgres(o.store)) {
		return cfg, fmt.Errorf("--query-listen: only a leader process on a shared postgres:// --store stands by and answers reads")
	}
	if len(cfg.Listen) == 0 {
		return cfg, fmt.Errorf("--listen: no address given")
	}
	return cfg, nil
}

// checkLimits refuses a connection limit that is not positive (0 would
// not mean "none").
func (o *serverOptions) checkLimits() error {
	for name, v := range map[string]float64{
		"conns-per-address": float64(o.limits.ConnsPerAddr), "conn-rate": o.limits.ConnRate,
		"conn-burst": float64(o.limits.ConnBurst), "max-conns": float64(o.limits.Conns), "upload-conns": float64(o.uploadConns),
		"upload-conns-per-address": float64(o.uploadLimits.ConnsPerAddr), "upload-rate": o.uploadLimits.Rate, "upload-burst": float64(o.uploadLimits.Burst),
	} {
		if !(v > 0) {
			return fmt.Errorf("--%s %v is not positive: give a limit above 0 (see fedecdf server --help)", name, v)
		}
	}
	return nil
}

// never maps the flag value 0 (none) of an interval to the negative
// interval deploy.ServerConfig reads as never (0 is its default).
func never(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// newLogger returns a text logger writing to w at the named level (the
// --log-level of the commands without --log-format).
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	return deploy.NewLogger(w, "text", level)
}

// multiaddrs parses the multiaddrs of flag.
func multiaddrs(flag string, addrs []string) ([]ma.Multiaddr, error) {
	var out []ma.Multiaddr
	for _, s := range addrs {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, s, err)
		}
		out = append(out, a)
	}
	return out, nil
}
