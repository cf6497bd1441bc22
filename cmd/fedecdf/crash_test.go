package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// asCommand is the environment variable that makes the test binary run
// as the fedecdf command (os.Args[1:] are its arguments), so the crash
// tests start real server processes without building the binary.
const asCommand = "FEDECDF_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashEpsilon is ε per release: the noise (scale ~ 2^-45 per prefix)
// rounds away, so released counts are exact. The budget allows two
// releases.
const (
	crashEpsilon = 1 << 48
	crashBins    = 64
)

// crashTransport are the clients' transport settings: loopback only,
// short backoff, bounded calls.
var crashTransport = p2p.Config{
	Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Backoff: 20 * time.Millisecond, Attempts: 4, CallTimeout: 10 * time.Second,
}

// serverLog collects the standard error of every run of one server
// process, safe for the process's writes and the test's reads.
type serverLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *serverLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *serverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// logged reports whether server name's log says want within 30 s: a
// server logs a refusal as it answers it, so the line may follow the
// answer the test already holds.
func (c *crashCluster) logged(name, want string) bool {
	deadline := time.After(30 * time.Second)
	for tick := time.NewTicker(20 * time.Millisecond); !strings.Contains(c.logs[name].String(), want); {
		select {
		case <-deadline:
			return false
		case <-c.ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// serverProc is one run of `fedecdf server` (the re-executed test binary).
type serverProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	err    error         // its exit status, once exited is closed
}

// crashCluster is a leader and a helper process on 127.0.0.1 (or in a
// network namespace) with their key files, manifest and stores in one
// directory.
type crashCluster struct {
	t        *testing.T
	ctx      context.Context
	opts     clusterOptions
	dir      string
	manifest string // its path
	m        *manifest.Manifest
	ids      map[string]*manifest.Identity // leader, helper, analyst
	addrs    map[string]string             // the servers' listen multiaddrs
	procs    map[string]*serverProc
	logs     map[string]*serverLog
	starts   map[string]int // runs started per server
}

// fedecdf runs the command with args through the test binary.
func (c *crashCluster) fedecdf(args ...string) string {
	c.t.Helper()
	out, err := c.command(args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("fedecdf %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *crashCluster) command(args ...string) *exec.Cmd {
	c.t.Helper()
	self, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.CommandContext(c.ctx, self, args...)
	cmd.Env = append(os.Environ(), asCommand+"=1")
	return cmd
}

// clusterOptions place a crashCluster's servers.
type clusterOptions struct {
	// netns is the network namespace the servers run in ("": this
	// process's), and ip their address there (free loopback ports when
	// empty; ports 4001 and 4002 otherwise).
	netns, ip string
	// serverArgs are extra flags of both servers, manifestArgs of
	// fedecdf manifest (a flag given again overrides the default).
	serverArgs, manifestArgs []string
	// stores are the servers' --store values by role (a bbolt file in
	// the cluster's directory for a role not named).
	stores map[string]string
}

// newCrashCluster makes the keys and the manifest with `fedecdf keygen`
// and `fedecdf manifest` and starts both servers on 127.0.0.1.
func newCrashCluster(t *testing.T, ctx context.Context, minReports int) *crashCluster {
	return newClusterWith(t, ctx, minReports, clusterOptions{})
}

// newClusterWith is newCrashCluster with the servers placed by opts.
func newClusterWith(t *testing.T, ctx context.Context, minReports int, opts clusterOptions) *crashCluster {
	c := newKeyedCluster(t, ctx, opts, "leader", "helper")
	for k, role := range []string{"leader", "helper"} {
		ip, port := opts.ip, 4001+k
		if ip == "" {
			ip = "127.0.0.1"
			var err error
			if port, err = freeLoopbackPort(); err != nil {
				t.Fatal(err)
			}
		}
		c.addrs[role] = fmt.Sprintf("/ip4/%s/tcp/%d", ip, port)
		c.logs[role] = &serverLog{}
	}
	c.manifest = filepath.Join(c.dir, "manifest.json")
	float := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	c.fedecdf(append([]string{"manifest", "--output", c.manifest, "--dataset", "crash",
		"--leader", filepath.Join(c.dir, "leader.key.pub"), "--leader-addr", c.addrs["leader"],
		"--helper", filepath.Join(c.dir, "helper.key.pub"), "--helper-addr", c.addrs["helper"],
		"--analyst", filepath.Join(c.dir, "analyst.key.pub"),
		"--bins", strconv.Itoa(crashBins), "--mechanism", "tree", "--epsilon", float(crashEpsilon),
		"--budget-epsilon", float(2 * crashEpsilon), "--min-reports", strconv.Itoa(minReports)}, opts.manifestArgs...)...)
	var err error
	if c.m, err = manifest.ReadManifest(c.manifest); err != nil {
		t.Fatal(err)
	}
	c.start("helper")
	c.start("leader")
	return c
}

// newKeyedCluster makes a cluster's directory and its leader's,
// helper's and analyst's keys (fedecdf keygen); the server processes
// names are killed when t ends, and their logs shown if it failed.
func newKeyedCluster(t *testing.T, ctx context.Context, opts clusterOptions, names ...string) *crashCluster {
	c := &crashCluster{
		t: t, ctx: ctx, opts: opts, dir: t.TempDir(), ids: map[string]*manifest.Identity{}, addrs: map[string]string{},
		procs: map[string]*serverProc{}, logs: map[string]*serverLog{}, starts: map[string]int{},
	}
	t.Cleanup(func() {
		for _, name := range names {
			if c.procs[name] != nil {
				c.kill(name)
			}
			if t.Failed() && c.logs[name] != nil {
				t.Logf("%s standard error:\n%s", name, c.logs[name])
			}
		}
	})
	for _, name := range []string{"leader", "helper", "analyst"} {
		key := filepath.Join(c.dir, name+".key")
		c.fedecdf("keygen", "--output", key)
		id, err := manifest.ReadIdentity(key)
		if err != nil {
			t.Fatal(err)
		}
		c.ids[name] = id
	}
	return c
}

// start runs `fedecdf server` for role on its port and store and waits
// until it logs that it is serving (after its store is replayed and its
// handlers are installed).
func (c *crashCluster) start(role string) {
	c.t.Helper()
	st := c.opts.stores[role]
	if st == "" {
		st = filepath.Join(c.dir, role+".db")
	}
	args := append([]string{"server", "--role", role, "--key", filepath.Join(c.dir, role+".key"), "--manifest", c.manifest,
		"--listen", c.addrs[role], "--store", st, "--log-level", "info"}, c.opts.serverArgs...)
	cmd := c.command(args...)
	if c.opts.netns != "" {
		// ip netns exec execs the command: the process is the server's.
		cmd.Args = append([]string{"ip", "netns", "exec", c.opts.netns}, cmd.Args...)
		cmd.Path = ipPath(c.t)
	}
	p := c.launch(role, cmd)
	for tick := time.NewTicker(20 * time.Millisecond); strings.Count(c.logs[role].String(), "msg=serving") < c.starts[role]; {
		select {
		case <-p.exited:
			c.t.Fatalf("the %s exited before serving: %v", role, p.err)
		case <-c.ctx.Done():
			c.t.Fatalf("the %s is not serving: %v", role, c.ctx.Err())
		case <-tick.C:
		}
	}
}

// launch starts cmd as the server process name, its standard error
// appended to the name's log.
func (c *crashCluster) launch(name string, cmd *exec.Cmd) *serverProc {
	c.t.Helper()
	fmt.Fprintf(c.logs[name], "--- run %d\n", c.starts[name]+1)
	cmd.Stderr = c.logs[name]
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting the %s: %v", name, err)
	}
	p := &serverProc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	c.procs[name] = p
	c.starts[name]++
	return p
}

// kill sends the server of role SIGKILL (no shutdown code runs: its
// store is as the last acknowledged write left it) and waits for it.
func (c *crashCluster) kill(role string) {
	c.t.Helper()
	p := c.procs[role]
	c.procs[role] = nil
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		c.t.Errorf("killing the %s: %v", role, err)
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		c.t.Errorf("the %s did not exit 10 s after SIGKILL", role)
	}
}

// crash kills the server of role and starts it again on the same port
// and store.
func (c *crashCluster) crash(role string) {
	c.t.Helper()
	c.kill(role)
	c.start(role)
}

func (c *crashCluster) newParty() *client.Party {
	c.t.Helper()
	p, err := client.NewParty(c.m, nil, crashTransport)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { p.Close() })
	return p
}

// rawHost is a dial-only host with key that knows both servers: it
// sends single protocol messages no client of package deploy sends.
func (c *crashCluster) rawHost(key crypto.PrivKey, self transport.PeerID) *p2p.Host {
	c.t.Helper()
	book := map[transport.PeerID]peer.AddrInfo{}
	for name, e := range map[transport.PeerID]manifest.Endpoint{manifest.LeaderName: c.m.Leader, manifest.HelperName: c.m.Helper} {
		id, err := peer.Decode(e.PeerID)
		if err != nil {
			c.t.Fatal(err)
		}
		book[name] = peer.AddrInfo{ID: id, Addrs: []ma.Multiaddr{ma.StringCast(e.Addrs[0])}}
	}
	tc := crashTransport
	tc.Key, tc.Self, tc.Peers = key, self, book
	h, err := p2p.New(tc)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { h.Close() })
	return h
}

// release creates a release as the analyst and reads its counts.
func (c *crashCluster) release() (*analyst.ECDF, error) {
	c.t.Helper()
	return c.releaseOver(crashTransport)
}

// releaseOver is release over a transport of config cfg.
func (c *crashCluster) releaseOver(cfg p2p.Config) (*analyst.ECDF, error) {
	c.t.Helper()
	a, err := analyst.NewAnalyst(c.m, c.ids["analyst"], cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	defer a.Close()
	return a.ECDF(c.ctx)
}

// exactCounts are the prefix counts of the reports' 1-based bins:
// counts[i−1] is the number of reports in bins 1..i.
func exactCounts(m *manifest.Manifest, reports []*client.Report, bins map[*client.Report]int) []int64 {
	want := make([]int64, m.Grid.Bins)
	for _, r := range reports {
		for i := bins[r] - 1; i < len(want); i++ {
			want[i]++
		}
	}
	return want
}

func wantBudgetRefusal(t *testing.T, who string, err error) {
	t.Helper()
	if !errors.Is(err, ledger.ErrBudgetExhausted) {
		t.Fatalf("%s: release after the budget is spent: %v, want %q", who, err, ledger.ErrBudgetExhausted)
	}
}

// TestLeaderSIGKILL runs the leader and the helper as `fedecdf server`
// processes on 127.0.0.1 and crashes them with SIGKILL. After k
// acknowledged reports the leader is killed and restarted from its
// store: all k are released, none twice; retries of acknowledged
// reports (lost acknowledgements) come back as duplicates, a report the
// leader stored but the helper never received completes on retry and
// counts once, and a report held by the leader alone is left out. The
// two releases the budget allows are spent; after SIGKILL and restart
// of both servers, each refuses a new release on its own ledger, and
// the first release reads back with its counts at no cost.
func TestLeaderSIGKILL(t *testing.T) {
	const k, retried, fresh = 24, 8, 8
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newCrashCluster(t, ctx, k)
	g, err := c.m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	p := c.newParty()
	inst := client.DemoInstances(k+2+fresh, 11)
	reports := make([]*client.Report, len(inst))
	bins := map[*client.Report]int{}
	for j, x := range inst {
		if reports[j], err = p.NewReport(x); err != nil {
			t.Fatal(err)
		}
		if bins[reports[j]], err = g.Bin(x.Score); err != nil {
			t.Fatal(err)
		}
	}
	acked, partial, leaderOnly, later := reports[:k], reports[k], reports[k+1], reports[k+2:]
	for _, r := range acked {
		if dup, err := p.Send(ctx, r); err != nil || dup {
			t.Fatalf("report %v: duplicate=%v, %v; want a new acknowledged report", r.ID, dup, err)
		}
	}
	// Two uploads reach the leader only (the party stops before the
	// helper): one is retried after the crash, the other never.
	stray := c.rawHost(c.newIdentityKey(), "")
	for _, r := range []*client.Report{partial, leaderOnly} {
		if ack, err := protocol.Call[*protocol.Ack](ctx, stray.Conn(p2p.ReportProtocol), manifest.LeaderName, r.Leader); err != nil || ack.Duplicate {
			t.Fatalf("upload of report %v to the leader alone: %+v, %v", r.ID, ack, err)
		}
	}

	c.crash("leader")
	for _, r := range append(slices.Clone(acked[:retried]), partial) {
		if dup, err := p.Send(ctx, r); err != nil || !dup {
			t.Fatalf("retry of report %v after the leader's crash: duplicate=%v, %v; want a duplicate", r.ID, dup, err)
		}
	}
	for _, r := range later {
		if dup, err := p.Send(ctx, r); err != nil || dup {
			t.Fatalf("report %v after the crash: duplicate=%v, %v; want a new acknowledged report", r.ID, dup, err)
		}
	}
	released := append(append(slices.Clone(acked), partial), later...)
	first, err := c.release()
	if err != nil {
		t.Fatal(err)
	}
	want := exactCounts(c.m, released, bins)
	if first.N != int64(len(released)) || !slices.Equal(first.Counts, want) {
		t.Fatalf("release over %d reports with counts\n%v\nwant %d reports (each distinct report both servers hold, once):\n%v", first.N, first.Counts, len(released), want)
	}

	if _, err := c.release(); err != nil {
		t.Fatalf("second release, within the budget: %v", err)
	}
	_, err = c.release()
	wantBudgetRefusal(t, "leader", err)

	c.kill("leader")
	c.crash("helper")
	// The helper enforces its own ledger: a release request signed with
	// the leader's key (the leader is down), after the manifest digests
	// every leader shows first, is refused there too.
	leader := c.rawHost(c.ids["leader"].Key, manifest.LeaderName)
	params, err := c.m.MechanismParams()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.Call[*protocol.ManifestDigest](ctx, leader.Conn(p2p.PeerProtocol), manifest.HelperName, &protocol.ManifestDigest{Fields: c.m.Digests()}); err != nil {
		t.Fatalf("manifest digests to the restarted helper: %v", err)
	}
	req := &protocol.CreateRelease{Dataset: c.m.Dataset, Release: payload.ReleaseID{0xc7}, Mechanism: params, Components: []payload.Component{payload.Count}}
	_, err = protocol.Call[*protocol.ReleaseCreated](ctx, leader.Conn(p2p.PeerProtocol), manifest.HelperName, req)
	wantBudgetRefusal(t, "helper", err)
	leader.Close()

	c.start("leader")
	_, err = c.release()
	wantBudgetRefusal(t, "leader", err)
	a, err := analyst.NewAnalyst(c.m, c.ids["analyst"], crashTransport)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	id, err := analyst.ParseReleaseID(first.Release)
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.ReadRelease(ctx, id)
	if err != nil || again.Charged || again.N != first.N || !slices.Equal(again.Counts, first.Counts) {
		t.Fatalf("first release read after both crashes: %+v, %v; want its %d reports and counts, uncharged", again, err, first.N)
	}
}

func (c *crashCluster) newIdentityKey() crypto.PrivKey {
	c.t.Helper()
	id, err := manifest.NewIdentity()
	if err != nil {
		c.t.Fatal(err)
	}
	return id.Key
}
