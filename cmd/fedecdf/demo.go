package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// demoOptions are the flags of "fedecdf demo".
type demoOptions struct {
	parties, bins int
	epsilon       float64
	keep, verbose bool
	upload        string
	backend       string
	// transport is how parties upload: transportSealed or transportLibp2p.
	transport string
	// malicious is the number of malicious parties.
	malicious int
}

// demoMalicious is the demo's default number of malicious parties.
const demoMalicious = 3

// The parties' transports of demo and bench ingest: one TCP connection
// per upload, HPKE-sealed to the server (the manifest gives the servers
// upload addresses), or a libp2p host per party.
const (
	transportSealed = "sealed"
	transportLibp2p = "libp2p"
)

// transportUsage is the help of the --transport flags.
const transportUsage = "how parties upload: sealed (one TCP connection per upload, HPKE-sealed to the server, the acknowledgement MACed) or libp2p (a libp2p host, connection and Noise handshake per party)"

// checkTransport refuses an unknown --transport.
func checkTransport(t string) error {
	if t != transportSealed && t != transportLibp2p {
		return fmt.Errorf("--transport %q: want %s or %s", t, transportSealed, transportLibp2p)
	}
	return nil
}

// newDemoCommand builds the "demo" command.
func newDemoCommand() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--parties 200]",
		Short: "Run two server processes, the parties and an analyst on 127.0.0.1, print the private ECDF, ROC AUC and Hosmer–Lemeshow test, and stop",
		Long: `demo runs a whole deployment on this machine: it makes the keys and the
manifest in a temporary directory, starts the leader and the helper as
server processes on 127.0.0.1, uploads --parties synthetic records (each
party over a TCP connection per upload, HPKE-sealed to each server, or
with --transport libp2p its own libp2p host) and the invalid reports of --malicious parties
(3 by default, one per rejection reason in turn: with the additive backend
(the default) an altered histogram, another report's share or proof, a
truncated share; with dcf a payload other than one record, a truncated
share, shares swapped), which both servers verify and reject; as the
analyst it prints what was
rejected, per reason, and the private ECDF with its quantiles, the ROC
AUC and the Hosmer–Lemeshow test from the same ROC release, over the
honest parties only; then it stops the servers and, without --keep,
removes the directory. On SIGINT (Ctrl-C) or SIGTERM it stops the servers and removes
the directory too; on Linux the servers also die if the demo is killed.`,
		Example: `  fedecdf demo
  fedecdf demo --parties 1000 --bins 128 --epsilon 2 --upload relay --malicious 7 --keep
  fedecdf demo --backend dcf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return withServersDir(cmd, "fedecdf-demo", o.keep, func(ctx context.Context, dir string) error {
				return runDemo(ctx, cmd, dir, o)
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.parties, "parties", 200, "number of parties")
	f.StringVar(&o.transport, "transport", transportSealed, transportUsage)
	f.IntVar(&o.bins, "bins", 64, binsUsageUnlike("suits the demo's few parties and keeps it quick"))
	f.Float64Var(&o.epsilon, "epsilon", 1, "ε of the release")
	f.StringVar(&o.upload, "upload", manifest.UploadDirect, "upload mode: direct or relay (through the leader, HPKE-sealed to the helper)")
	f.StringVar(&o.backend, "backend", string(server.Additive), "secure-sum backend: additive (verified one-hot histograms) or dcf (verified DCF keys, probability included)")
	f.IntVar(&o.malicious, "malicious", demoMalicious, "number of malicious parties, each uploading an invalid report both servers reject")
	f.BoolVar(&o.verbose, "verbose", false, "show the servers' INFO logs (by default only their warnings and errors)")
	f.BoolVar(&o.keep, "keep", false, "keep the keys, manifest, stores and logs in the temporary directory")
	return cmd
}

// check refuses demo flags out of range.
func (o *demoOptions) check() error {
	switch {
	case o.parties < 1:
		return fmt.Errorf("--parties %d is not positive", o.parties)
	case o.backend != string(server.Additive) && o.backend != string(server.DCF):
		return fmt.Errorf("--backend %q: want additive or dcf", o.backend)
	case o.malicious < 0:
		return fmt.Errorf("--malicious %d is negative: give 0 for none, or a number of malicious parties", o.malicious)
	}
	return checkTransport(o.transport)
}

// withServersDir runs fn, which starts servers in dir, with a new
// temporary directory (prefix), removed afterwards unless keep, and a
// context that SIGINT and SIGTERM end: fn then stops its servers, and
// the error says so.
func withServersDir(cmd *cobra.Command, prefix string, keep bool, fn func(ctx context.Context, dir string) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	err = fn(ctx, dir)
	if ctx.Err() != nil && cmd.Context().Err() == nil {
		if keep {
			return fmt.Errorf("interrupted: servers stopped; %s kept (--keep)", dir)
		}
		return fmt.Errorf("interrupted: servers stopped, %s removed", dir)
	}
	return err
}

// runDemo runs the demo of o in dir: keys and manifest, the two server
// processes (their standard error is the command's), the parties and
// the analyst's queries.
func runDemo(ctx context.Context, cmd *cobra.Command, dir string, o demoOptions) error {
	out := cmd.OutOrStdout()
	level := "warn"
	if o.verbose {
		level = "info"
	}
	d, err := newLocal(dir, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "demo in %s: leader %s, helper %s\n", dir, d.addrs["leader"], d.addrs["helper"])
	err = d.start(ctx, cmd.ErrOrStderr(), "", func(string) []string { return []string{"--log-level", level} })
	defer d.stop()
	if err != nil {
		return err
	}
	return demoAnalyst(ctx, out, newProgress(cmd.ErrOrStderr(), false), d.m, d.ids["analyst"], o)
}

// localDeployment is a leader and a helper process on 127.0.0.1 with
// their keys, manifest and stores (NAME.db) in dir.
type localDeployment struct {
	dir   string
	ids   map[string]*manifest.Identity
	m     *manifest.Manifest
	addrs map[string]string
	// uploads are the servers' sealed-upload addresses (none with
	// --transport libp2p).
	uploads map[string]string
	procs   map[string]*exec.Cmd
	stop    func() // never nil: terminates the processes started
	// stores are the servers' --store values by role (dir/ROLE.db if
	// not named).
	stores map[string]string
	// started are the processes stop terminates; spread, with several
	// processes per role (bench_processes.go), the manifest of each.
	started []*exec.Cmd
	spread  []*manifest.Manifest
	// env, if not nil, is the environment of the server processes
	// (bench ingest's GOMAXPROCS per process, serverEnv).
	env []string
}

// addStop adds p to the processes d.stop terminates.
func (d *localDeployment) addStop(p *exec.Cmd) { d.started = append(d.started, p) }

// newLocal makes the keys and the manifest of o in dir, with free
// loopback ports for the two servers (and their sealed-upload listeners
// with --transport sealed, in d.uploads).
func newLocal(dir string, o demoOptions) (*localDeployment, error) {
	d := &localDeployment{dir: dir, addrs: map[string]string{}, uploads: map[string]string{}, procs: map[string]*exec.Cmd{}, stop: func() {}}
	var err error
	if d.ids, err = demoIdentities(dir); err != nil {
		return nil, err
	}
	for _, name := range []string{"leader", "helper"} {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		d.addrs[name] = fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port)
		if o.transport != transportSealed {
			continue
		}
		if port, err = freeLoopbackPort(); err != nil {
			return nil, err
		}
		d.uploads[name] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	d.m = demoManifest(d.ids, d.addrs, d.uploads, o)
	if err := d.m.Write(filepath.Join(dir, "manifest.json")); err != nil {
		return nil, err
	}
	return d, nil
}

// start starts the two servers as processes of exe (this executable if
// empty) with the extra flags args(role), writing to stderr, and waits
// until each listens. d.stop terminates those started, also on error.
// loopbackAdmission are the sealed-upload admission flags of a local
// deployment's servers: every party connects from 127.0.0.1, one client
// address, which the per-address defaults (meant for one NAT among many)
// would hold to a few dozen connections a second.
var loopbackAdmission = []string{"--upload-conns-per-address", "1000000", "--upload-rate", "1000000", "--upload-burst", "1000000"}

func (d *localDeployment) start(ctx context.Context, stderr io.Writer, exe string, args func(role string) []string) error {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	manifest := filepath.Join(d.dir, "manifest.json")
	d.stop = func() { stopChildren(d.started) }
	for _, role := range []string{"helper", "leader"} {
		p := demoChild(ctx, exe, append(append([]string{"server", "--role", role, "--key", filepath.Join(d.dir, role+".key"),
			"--manifest", manifest, "--listen", d.addrs[role], "--store", d.store(role)}, loopbackAdmission...), args(role)...)...)
		p.Stderr, p.Env = stderr, d.env
		if err := p.Start(); err != nil {
			return fmt.Errorf("starting the %s: %w", role, err)
		}
		d.addStop(p)
		d.procs[role] = p
		for _, addr := range []string{d.addrs[role], d.uploads[role]} {
			if addr == "" {
				continue
			}
			if err := waitListening(ctx, addr); err != nil {
				return fmt.Errorf("the %s: %w", role, err)
			}
		}
	}
	return nil
}

// store is the --store of the server of role.
func (d *localDeployment) store(role string) string {
	if s := d.stores[role]; s != "" {
		return s
	}
	return filepath.Join(d.dir, role+".db")
}

// demoIdentities makes the leader's, helper's and analyst's identities
// and writes each to dir/NAME.key.
func demoIdentities(dir string) (map[string]*manifest.Identity, error) {
	ids := map[string]*manifest.Identity{}
	for _, name := range []string{"leader", "helper", "analyst"} {
		id, err := manifest.NewIdentity()
		if err != nil {
			return nil, err
		}
		if err := manifest.WriteIdentity(filepath.Join(dir, name+".key"), id); err != nil {
			return nil, err
		}
		ids[name] = id
	}
	return ids, nil
}

// demoManifest is the demo's manifest: the servers at addrs (their
// sealed-upload listeners at uploads), one analyst, a budget for the
// ECDF and the ROC release.
func demoManifest(ids map[string]*manifest.Identity, addrs, uploads map[string]string, o demoOptions) *manifest.Manifest {
	return &manifest.Manifest{
		Version: manifest.ManifestVersion, Protocol: protocol.Version, Dataset: "demo", Backend: o.backend, Upload: o.upload,
		Leader:     manifest.Endpoint{Public: ids["leader"].Public(), Addrs: []string{addrs["leader"]}, UploadAddr: uploads["leader"]},
		Helper:     manifest.Endpoint{Public: ids["helper"].Public(), Addrs: []string{addrs["helper"]}, UploadAddr: uploads["helper"]},
		Analysts:   []string{ids["analyst"].PeerID.String()},
		Grid:       manifest.Grid{Scale: "linear", Min: 0, Max: 1, Bins: o.bins},
		Payload:    manifest.PayloadLayout(),
		Mechanism:  manifest.Mech{Name: "auto", Epsilon: o.epsilon, Neighbours: "replace", Allowed: []string{"auto", analysis.ROCMechanism}},
		Budget:     manifest.Budget{Epsilon: 2 * o.epsilon}, // the ECDF and the ROC release
		MinReports: o.parties,
	}
}

// demoChild returns the command of a child process of the demo: sent
// SIGTERM when ctx ends (killed 10 s later if still running), and on
// Linux also when the demo itself dies, even by SIGKILL (childAttr).
func demoChild(ctx context.Context, name string, args ...string) *exec.Cmd {
	p := exec.CommandContext(ctx, name, args...)
	p.Cancel = func() error { return p.Process.Signal(syscall.SIGTERM) }
	p.WaitDelay = 10 * time.Second
	p.SysProcAttr = childAttr()
	return p
}

// stopChildren sends each started process of procs SIGTERM and waits
// for it (exec kills it after its WaitDelay).
func stopChildren(procs []*exec.Cmd) {
	for _, p := range procs {
		if p.Process != nil && p.ProcessState == nil && p.Process.Signal(syscall.SIGTERM) != nil {
			_ = p.Process.Kill() // no SIGTERM on this system
		}
	}
	for _, p := range procs {
		if p.Process != nil && p.ProcessState == nil {
			_ = p.Wait()
		}
	}
}

// demoAnalyst uploads the demo's parties, then as the analyst releases
// and prints the ECDF, the ROC AUC and the Hosmer–Lemeshow test.
func demoAnalyst(ctx context.Context, out io.Writer, bar *progress, m *manifest.Manifest, id *manifest.Identity, o demoOptions) error {
	start := time.Now()
	bar.Start("uploading parties", o.parties)
	inst := client.DemoInstances(o.parties, 1)
	truth, err := demoTruth(m, inst)
	if err != nil {
		return err
	}
	n, err := client.SubmitAllProgress(ctx, m, inst, p2p.Config{}, 16, true, func() { bar.Add(1) })
	if err == nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d parties uploaded in %.2f s (%s transport)\n", n, time.Since(start).Seconds(), o.transport)
	if o.malicious > 0 {
		if err := client.SubmitForgeries(ctx, m, o.malicious, p2p.Config{}, 1); err != nil {
			return err
		}
		fmt.Fprintf(out, "%d malicious parties uploaded an invalid report each\n", o.malicious)
	}
	a, err := analyst.NewAnalyst(m, id, p2p.Config{})
	if err != nil {
		return err
	}
	defer a.Close()
	start = time.Now()
	e, err := a.ECDF(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "release and query of %d prefixes in %.2f s\n", o.bins, time.Since(start).Seconds())
	if err := demoRejected(ctx, out, m, id, e.N); err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := e.Smooth("l2", []float64{0.1, 0.25, 0.5, 0.75, 0.9}); err != nil {
		return err
	}
	if err := writeECDFText(out, e); err != nil {
		return err
	}
	rocEpsilon, err := demoROC(ctx, out, a, truth)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "\ntotal ε spent: %.6g (ECDF %.6g + ROC/PR %.6g; the Hosmer–Lemeshow test reuses the ROC release)\n", e.Epsilon+rocEpsilon, e.Epsilon, rocEpsilon)
	return err
}

// demoRejected prints the reports each server rejected at verification,
// per reason (fedecdf status), and the n of the release: the honest
// parties only.
func demoRejected(ctx context.Context, out io.Writer, m *manifest.Manifest, id *manifest.Identity, n int64) error {
	st, err := analyst.AskStatus(ctx, m, id, p2p.Config{})
	if err != nil {
		return err
	}
	for _, sv := range st.Servers {
		fmt.Fprintf(out, "rejected by the %s: %s\n", sv.Role, verify.RejectedText(sv.Rejected))
	}
	_, err = fmt.Fprintf(out, "the release counts n = %d verified reports: the honest parties only\n", n)
	return err
}

// demoTruths are the exact statistics of the demo's generated data on the
// manifest's grid, printed next to the private ones.
type demoTruths struct {
	auc float64
	h   string // H, or why it is undefined
}

// demoTruth computes the exact binned AUC and Hosmer–Lemeshow H (10
// groups) of inst on m's grid: what the private values estimate.
func demoTruth(m *manifest.Manifest, inst []party.Instance) (demoTruths, error) {
	g, err := m.NewGrid()
	if err != nil {
		return demoTruths{}, err
	}
	bins, labels, probs := make([]int, len(inst)), make([]int, len(inst)), make([]float64, len(inst))
	for k, x := range inst {
		if bins[k], err = g.Bin(x.Score); err != nil {
			return demoTruths{}, err
		}
		labels[k], probs[k] = x.Label, x.Probability
	}
	c, err := analysis.TrueROC(bins, labels, g.Len(), analysis.AllPrefixes(g.Len()))
	if err != nil {
		return demoTruths{}, err
	}
	t := demoTruths{auc: c.AUC}
	if h, err := analysis.TrueHosmer(bins, labels, probs, g.Len(), 10); err != nil {
		t.h = "undefined"
	} else {
		t.h = fmt.Sprintf("%.3g", h.H)
	}
	return t, nil
}

// demoROC releases the ROC pair and prints its AUC and the Hosmer–Lemeshow
// test computed from the same release (the grid plan, no further ε), each
// next to its true value, and returns the release's ε.
func demoROC(ctx context.Context, out io.Writer, a *analyst.Analyst, truth demoTruths) (float64, error) {
	r, err := a.ROC(ctx, "l2")
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "\nROC release %s (label and 1−label, ε=%.6g): private AUC %.4f (true %.4f on the same grid), average precision %.4f\n", r.Release, r.Epsilon, r.AUC, truth.auc, r.AveragePrecision)
	id, err := analyst.ParseReleaseID(r.Release)
	if err != nil {
		return 0, err
	}
	h, err := a.HosmerRelease(ctx, id, "l2", 10, 0)
	if err != nil {
		return 0, err
	}
	if h.Error != "" {
		_, err = fmt.Fprintf(out, "Hosmer–Lemeshow from the same release (no further ε): undefined at this n and ε (%s); true H %s\n", h.Error, truth.h)
		return r.Epsilon, err
	}
	_, err = fmt.Fprintf(out, "Hosmer–Lemeshow from the same release (no further ε): H = %.3g over %d groups (true H %s)\n", *h.Statistic, len(h.Groups), truth.h)
	return r.Epsilon, err
}

// freeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits (at most 30 s) until addr, a /ip4/…/tcp/… multiaddr
// or a HOST:PORT on loopback, accepts TCP connections.
func waitListening(ctx context.Context, addr string) error {
	hostPort := addr
	var port int
	if _, err := fmt.Sscanf(addr, "/ip4/127.0.0.1/tcp/%d", &port); err == nil {
		hostPort = fmt.Sprintf("127.0.0.1:%d", port)
	} else if !strings.HasPrefix(addr, "127.0.0.1:") {
		return fmt.Errorf("address %s: not on 127.0.0.1", addr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", hostPort, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after 30 s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
