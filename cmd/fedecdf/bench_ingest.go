package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/bench"
	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/server"
)

// benchIngestOptions are the flags of "fedecdf bench ingest".
type benchIngestOptions struct {
	parties, bins, hosts, concurrency int
	connections, format, serverExe    string
	profile, upload, transport        string
	store                             string
	keep                              bool
	// processes is the number of server processes per role (--store
	// only; the bbolt run has one).
	processes int
}

// newBenchIngestCommand builds "bench ingest".
func newBenchIngestCommand() *cobra.Command {
	var o benchIngestOptions
	cmd := &cobra.Command{
		Use:   "ingest --parties N [--connections fresh|reuse]",
		Short: "Measure report ingestion: two server processes on 127.0.0.1, N uploads, CPU, bytes written, lost and duplicated reports",
		Long: `bench ingest starts the leader and the helper as server processes on
127.0.0.1 (as demo does, with bbolt stores in a temporary directory) and
uploads --parties reports, at most --concurrency at a time, directly to
both servers or (--upload relay) through the leader, the helper's share
HPKE-sealed to it. With --transport sealed (the default) every upload is
one TCP connection to the server's sealed-upload address carrying one
frame HPKE-sealed to that server, answered with a MACed acknowledgement
(as in a deployment, whatever --connections says). With --transport
libp2p and --connections fresh each party is a libp2p host of its own (a
connection and a Noise handshake per party and server, as in a
deployment); with --connections reuse a load generator multiplexes the
parties over --hosts hosts (one connection per host and server, a stream
per report). The reports in flight also bound how many a server
commits in one transaction. It then stops the servers, reads both
stores and checks every acknowledged report is there byte for byte
(lost) and nothing else is (duplicated: an ID never sent, or an upload
stored twice).

It prints reports_per_s (acknowledged reports per wall second),
server_cpu_ms_per_report (user and system CPU of both server processes
while uploading, from /proc, per report), bytes_written_per_report (the
bytes both servers caused to be written to disk, /proc/PID/io
write_bytes), store_bytes_per_report (both store files' size) and the
load generator's own CPU. The machine's load average is printed too:
CPU figures are comparable across loads, wall-clock ones are not. The
command fails if a report was lost, duplicated or not acknowledged.

--store postgres://… (a local PostgreSQL database; the password in
PGPASSWORD) runs the same load a second time with the servers on
PostgreSQL, each on a schema of its own created in that database and
dropped after, and prints both runs: the server CPU then includes the
PostgreSQL processes' (the backends of the servers' connections and the
cluster's background processes, from their /proc stat), bytes written
theirs too, and cpu_ratio_to_bbolt compares the two runs. With
--processes K (K > 1) the PostgreSQL run has K server processes per role
on the role's schema: the first coordinates, the others stand by and
record the uploads they receive, party k uploading to process k mod K of
each role; the server CPU is all K processes' and their backends', the
coordinators' reading of the others' reports included.

--server-binary runs the servers from another fedecdf executable (the
same load against another build); --profile DIR writes each server's CPU
profile to DIR/leader.pprof and DIR/helper.pprof (with servers that have
the --cpu-profile flag).`,
		Example: `  fedecdf bench ingest --parties 5000
  fedecdf bench ingest --parties 5000 --transport libp2p --connections fresh --format json
  fedecdf bench ingest --parties 100000 --upload relay --format json
  fedecdf bench ingest --parties 100000 --store postgres://postgres@/postgres?host=/run/postgresql --processes 2 --format json
  nice fedecdf bench ingest --parties 5000 --profile /tmp/prof && go tool pprof -top /tmp/prof/leader.pprof`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return withServersDir(cmd, "fedecdf-ingest", o.keep, func(ctx context.Context, dir string) error {
				r, err := o.compare(ctx, cmd.ErrOrStderr(), dir)
				if err != nil {
					return err
				}
				if err := r.write(cmd.OutOrStdout(), o.format); err != nil {
					return err
				}
				return r.verdict()
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.parties, "parties", 1000, "number of reports (parties)")
	f.StringVar(&o.transport, "transport", transportSealed, transportUsage)
	f.StringVar(&o.connections, "connections", "fresh", "with --transport libp2p: fresh (a libp2p host, connection and handshake per party) or reuse (parties multiplexed over --hosts hosts)")
	f.IntVar(&o.hosts, "hosts", 4, "hosts of the load generator with --connections reuse")
	f.IntVar(&o.concurrency, "concurrency", 64, "reports in flight at once")
	f.StringVar(&o.upload, "upload", manifest.UploadDirect, "upload mode: direct (a connection to each server) or relay (through the leader, HPKE-sealed to the helper)")
	f.IntVar(&o.bins, "bins", 64, binsUsageUnlike("sets the size of a report (a DCF key of log2(bins) levels), and EXPERIMENTS.md's ingest figures were measured with it"))
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.StringVar(&o.serverExe, "server-binary", "", "fedecdf executable running the two servers (default: this one), to compare builds")
	f.StringVar(&o.profile, "profile", "", "directory to write the servers' CPU profiles to (leader.pprof, helper.pprof)")
	f.StringVar(&o.store, "store", "", "postgres:// DSN of a local database: run the servers on PostgreSQL (a schema each, dropped after) after a bbolt run of the same load (password from PGPASSWORD)")
	f.IntVar(&o.processes, "processes", 1, "with --store: server processes per role on its PostgreSQL schema (the first coordinates, the others record the uploads they receive)")
	f.BoolVar(&o.keep, "keep", false, "keep the keys, manifest and stores in the temporary directory (and the PostgreSQL schemas)")
	return cmd
}

// check refuses flags out of range.
func (o *benchIngestOptions) check() error {
	switch {
	case o.parties < 1:
		return fmt.Errorf("--parties %d is not positive", o.parties)
	case o.connections != "fresh" && o.connections != "reuse":
		return fmt.Errorf("--connections %q: want fresh or reuse", o.connections)
	case o.hosts < 1:
		return fmt.Errorf("--hosts %d is not positive", o.hosts)
	case o.concurrency < 1:
		return fmt.Errorf("--concurrency %d is not positive", o.concurrency)
	case o.upload != manifest.UploadDirect && o.upload != manifest.UploadRelay:
		return fmt.Errorf("--upload %q: want %s or %s", o.upload, manifest.UploadDirect, manifest.UploadRelay)
	case o.format != "text" && o.format != "json":
		return fmt.Errorf("--format %q: want text or json", o.format)
	case o.store != "" && !store.IsPostgres(o.store):
		return fmt.Errorf("--store %q: want a postgres:// DSN (without --store the servers use bbolt files)", o.store)
	case o.processes < 1:
		return fmt.Errorf("--processes %d is not positive", o.processes)
	case o.processes > 1 && (o.store == "" || o.transport != transportSealed || o.upload != manifest.UploadDirect):
		return fmt.Errorf("--processes %d: several processes per role need --store postgres://…, --transport %s and --upload %s (a standby takes sealed uploads only)", o.processes, transportSealed, manifest.UploadDirect)
	}
	return checkTransport(o.transport)
}

// ingestResult is the output of bench ingest.
type ingestResult struct {
	Parties      int     `json:"parties"`
	Connections  string  `json:"connections"`
	Transport    string  `json:"transport"`
	Upload       string  `json:"upload"`
	Concurrency  int     `json:"concurrency"`
	Acknowledged int     `json:"acknowledged"`
	Failed       int     `json:"failed"`
	Lost         int     `json:"lost"`
	Duplicated   int     `json:"duplicated"`
	Seconds      float64 `json:"seconds"`
	ReportsPerS  float64 `json:"reports_per_s"`
	// ServerCPUMsPerReport is both servers' CPU per report.
	ServerCPUMsPerReport float64            `json:"server_cpu_ms_per_report"`
	ServerCPUSeconds     map[string]float64 `json:"server_cpu_s"`
	ClientCPUMsPerReport float64            `json:"client_cpu_ms_per_report"`
	// BytesWrittenPerReport and StoreBytesPerReport are over both servers.
	BytesWrittenPerReport float64 `json:"bytes_written_per_report"`
	StoreBytesPerReport   float64 `json:"store_bytes_per_report"`
	UploadBytes           int     `json:"upload_bytes"`
	LoadAverage           float64 `json:"load_average_1m"`
	// Store is bbolt or postgres. With postgres, the server figures
	// include the PostgreSQL processes' (PostgresCPUSeconds: the
	// backends of the servers' connections and the cluster's
	// background processes), and Bbolt is the same load on bbolt files
	// in the same run, CPURatioToBbolt the ratio of the CPU per report.
	Store string `json:"store"`
	// Processes is the number of server processes per role
	// (ServerCPUSeconds holds each: leader, leader2, …).
	Processes int `json:"processes"`
	// ServerGOMAXPROCS is the GOMAXPROCS each server process ran with
	// (serverEnv: the cores over Processes unless set).
	ServerGOMAXPROCS   string  `json:"server_gomaxprocs"`
	PostgresCPUSeconds float64 `json:"postgres_cpu_s,omitempty"`
	// PostgresBackends counts the backends of the servers' connections
	// measured.
	PostgresBackends int           `json:"postgres_backends,omitempty"`
	Bbolt            *ingestResult `json:"bbolt,omitempty"`
	CPURatioToBbolt  float64       `json:"cpu_ratio_to_bbolt,omitempty"`
}

// compare runs the load on bbolt files and, with --store, then on
// PostgreSQL, each in a directory of its own under dir.
func (o *benchIngestOptions) compare(ctx context.Context, stderr io.Writer, dir string) (*ingestResult, error) {
	bolt := *o
	bolt.store, bolt.processes = "", 1
	runs := []*benchIngestOptions{&bolt}
	if o.store != "" {
		runs = append(runs, o)
	}
	var results []*ingestResult
	for _, run := range runs {
		sub := filepath.Join(dir, "bbolt")
		if run.store != "" {
			sub = filepath.Join(dir, "postgres")
		}
		if err := os.Mkdir(sub, 0o700); err != nil {
			return nil, err
		}
		r, err := run.run(ctx, stderr, sub)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	r := results[len(results)-1]
	if len(results) == 2 {
		r.Bbolt = results[0]
		r.CPURatioToBbolt = r.ServerCPUMsPerReport / r.Bbolt.ServerCPUMsPerReport
	}
	return r, nil
}

// run starts the servers in dir, runs the load, stops the servers and
// checks their stores.
func (o *benchIngestOptions) run(ctx context.Context, stderr io.Writer, dir string) (*ingestResult, error) {
	args := func(role string) []string {
		a := []string{"--log-level", "warn"}
		if o.profile != "" {
			a = append(a, "--cpu-profile", filepath.Join(o.profile, role+".pprof"))
		}
		return a
	}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return nil, fmt.Errorf("--profile: %w", err)
		}
	}
	d, err := newLocal(dir, demoOptions{parties: o.parties, bins: o.bins, epsilon: 1, upload: o.upload, backend: string(server.DCF), transport: o.transport})
	if err != nil {
		return nil, err
	}
	var gomaxprocs string
	d.env, gomaxprocs = serverEnv(o.processes)
	var pg *pgBench
	if o.store != "" {
		if pg, err = newPGBench(ctx, o.store); err != nil {
			return nil, err
		}
		defer pg.close(context.Background(), o.keep)
		d.stores = map[string]string{"leader": pg.dsn("leader"), "helper": pg.dsn("helper")}
	}
	err = d.start(ctx, stderr, o.serverExe, args)
	defer d.stop()
	if err == nil {
		err = d.startStandbys(ctx, stderr, o.serverExe, o.processes, args)
	}
	if err != nil {
		return nil, err
	}
	r := &ingestResult{Parties: o.parties, Connections: o.connections, Transport: o.transport, Upload: o.upload, Concurrency: o.concurrency, ServerCPUSeconds: map[string]float64{}, Store: "bbolt", Processes: o.processes, ServerGOMAXPROCS: gomaxprocs}
	var pgBefore, pgAfter map[int]procUsage
	if pg != nil {
		r.Store = "postgres"
		if pgBefore, err = pg.usage(ctx); err != nil {
			return nil, err
		}
	}
	if r.LoadAverage, err = loadAverage(); err != nil {
		return nil, err
	}
	before, err := d.usage()
	if err != nil {
		return nil, err
	}
	load := bench.Load{Parties: o.parties, Concurrency: o.concurrency, Seed: 1, Transport: p2p.Config{RetryWindow: time.Minute}, Manifests: d.spread}
	if o.connections == "reuse" {
		load.Hosts = o.hosts
	}
	bar := newProgress(stderr, false)
	bar.Start("uploading reports", o.parties)
	load.Acked = func() { bar.Add(1) }
	start := time.Now()
	sent, err := bench.RunLoad(ctx, d.m, load)
	if err != nil {
		return nil, err
	}
	r.Seconds = time.Since(start).Seconds()
	bar.Finish()
	if len(d.spread) > 1 {
		// The coordinators read the standbys' last reports.
		time.Sleep(3 * deploy.DefaultTailInterval)
	}
	after, err := d.usage()
	if err != nil {
		return nil, err
	}
	if pg != nil {
		if pgAfter, err = pg.usage(ctx); err != nil {
			return nil, err
		}
	}
	d.stop()
	r.Acknowledged, r.Failed, r.UploadBytes = sent.Acked, sent.Failed, sent.UploadBytes
	r.ReportsPerS = float64(sent.Acked) / r.Seconds
	r.measure(before, after)
	if r.Lost, r.Duplicated, err = sent.Check(d.m.Dataset, d.store("leader"), d.store("helper")); err != nil {
		return nil, err
	}
	if pg != nil {
		cpu, written := pgDelta(pgBefore, pgAfter)
		r.PostgresCPUSeconds, r.PostgresBackends = cpu, pg.backends
		r.ServerCPUMsPerReport += 1000 * cpu / float64(o.parties)
		r.BytesWrittenPerReport += float64(written) / float64(o.parties)
		size, err := pg.storeBytes(ctx)
		r.StoreBytesPerReport = float64(size) / float64(o.parties)
		return r, err
	}
	for _, role := range []string{"leader", "helper"} {
		fi, err := os.Stat(filepath.Join(dir, role+".db"))
		if err != nil {
			return nil, err
		}
		r.StoreBytesPerReport += float64(fi.Size()) / float64(o.parties)
	}
	return r, nil
}

// usage reads the usage of both servers and of this process (the load
// generator, "client").
func (d *localDeployment) usage() (map[string]procUsage, error) {
	u := map[string]procUsage{}
	pids := map[string]int{"client": os.Getpid()}
	for role, p := range d.procs {
		pids[role] = p.Process.Pid
	}
	for name, pid := range pids {
		var err error
		if u[name], err = readProcUsage(pid); err != nil {
			return nil, fmt.Errorf("usage of the %s: %w", name, err)
		}
	}
	return u, nil
}

// measure sets the CPU and write figures from the usage before and
// after the load.
func (r *ingestResult) measure(before, after map[string]procUsage) {
	n := float64(r.Parties)
	for role := range after {
		if role == "client" {
			continue
		}
		cpu := (after[role].cpu - before[role].cpu).Seconds()
		r.ServerCPUSeconds[role] = cpu
		r.ServerCPUMsPerReport += 1000 * cpu / n
		r.BytesWrittenPerReport += float64(after[role].written-before[role].written) / n
	}
	r.ClientCPUMsPerReport = 1000 * (after["client"].cpu - before["client"].cpu).Seconds() / n
}

// write prints r as JSON or text.
func (r *ingestResult) write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if r.Bbolt != nil {
		if err := r.Bbolt.write(w, format); err != nil {
			return err
		}
		fmt.Fprintf(w, "postgres, the same load (CPU per report %.2f× bbolt's; PostgreSQL's processes %.2f s):\n", r.CPURatioToBbolt, r.PostgresCPUSeconds)
	}
	_, err := fmt.Fprintf(w, `%d reports (%s store, %d process(es) per role, %s transport, %s upload, %s connections, %d in flight): %d acknowledged, %d failed, %d lost, %d duplicated
%.2f s: %.0f reports/s (load average %.2f)
server CPU: %.3f ms per report (leader %.2f s, helper %.2f s); load generator %.3f ms per report
written to disk: %.0f bytes per report (both servers; upload %d bytes to each); stores %.0f bytes per report
`, r.Parties, r.Store, r.Processes, r.Transport, r.Upload, r.Connections, r.Concurrency, r.Acknowledged, r.Failed, r.Lost, r.Duplicated,
		r.Seconds, r.ReportsPerS, r.LoadAverage,
		r.ServerCPUMsPerReport, r.ServerCPUSeconds["leader"], r.ServerCPUSeconds["helper"], r.ClientCPUMsPerReport,
		r.BytesWrittenPerReport, r.UploadBytes, r.StoreBytesPerReport)
	return err
}

// errIngest is the error of a bench ingest run that lost, duplicated or
// failed to deliver reports.
var errIngest = errors.New("bench ingest: reports lost, duplicated or not acknowledged")

// verdict fails a run that lost, duplicated or failed reports.
func (r *ingestResult) verdict() error {
	if r.Bbolt != nil {
		if err := r.Bbolt.verdict(); err != nil {
			return fmt.Errorf("the bbolt run: %w", err)
		}
	}
	if r.Lost+r.Duplicated+r.Failed > 0 {
		return fmt.Errorf("%w: %d lost, %d duplicated, %d failed (see the servers' errors above)", errIngest, r.Lost, r.Duplicated, r.Failed)
	}
	return nil
}
