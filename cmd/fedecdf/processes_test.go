package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/internal/store"
)

// processCluster is a crashCluster with two `fedecdf server` processes
// per role, each role's two on one PostgreSQL schema: processes
// leader1, leader2, helper1, helper2, each with a libp2p address and a
// sealed-upload address of its own (both of a role in the manifest:
// upload_addr and more_upload_addrs).
type processCluster struct {
	*crashCluster
	upload map[string]string // process → its sealed-upload host:port
	stores map[string]string // role → DSN
	query  map[string]string // leader process → its --query-listen multiaddr
}

// processRole is the role of a process name ("leader2": leader).
func processRole(name string) string { return strings.TrimRight(name, "0123456789") }

func newProcessCluster(t *testing.T, ctx context.Context, minReports int, manifestArgs ...string) *processCluster {
	names := []string{"helper1", "helper2", "leader1", "leader2"}
	// The schemas first: dropped when t ends after the processes are
	// killed (cleanups run last first).
	stores := map[string]string{"leader": pgtest.Schema(t), "helper": pgtest.Schema(t)}
	c := &processCluster{crashCluster: newKeyedCluster(t, ctx, clusterOptions{}, names...), upload: map[string]string{}, stores: stores, query: map[string]string{}}
	args := []string{"manifest", "--output", filepath.Join(c.dir, "manifest.json"), "--dataset", "crash",
		"--leader", filepath.Join(c.dir, "leader.key.pub"), "--helper", filepath.Join(c.dir, "helper.key.pub"),
		"--analyst", filepath.Join(c.dir, "analyst.key.pub"), "--bins", strconv.Itoa(crashBins), "--mechanism", "tree",
		"--epsilon", strconv.FormatFloat(crashEpsilon, 'g', -1, 64), "--budget-epsilon", strconv.FormatFloat(3*crashEpsilon, 'g', -1, 64),
		"--min-reports", strconv.Itoa(minReports)}
	args = append(args, manifestArgs...)
	for _, name := range names {
		p2pPort, err := freeLoopbackPort()
		if err != nil {
			t.Fatal(err)
		}
		upPort, err := freeLoopbackPort()
		if err != nil {
			t.Fatal(err)
		}
		c.addrs[name] = fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", p2pPort)
		c.upload[name] = fmt.Sprintf("127.0.0.1:%d", upPort)
		if processRole(name) == "leader" {
			qPort, err := freeLoopbackPort()
			if err != nil {
				t.Fatal(err)
			}
			c.query[name] = fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", qPort)
		}
		c.logs[name] = &serverLog{}
		args = append(args, "--"+processRole(name)+"-addr", c.addrs[name])
	}
	args = append(args, "--leader-upload", c.upload["leader1"]+","+c.upload["leader2"], "--helper-upload", c.upload["helper1"], "--helper-upload", c.upload["helper2"])
	c.manifest = args[2]
	c.fedecdf(args...)
	var err error
	if c.m, err = manifest.ReadManifest(c.manifest); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		c.startProcess(name)
	}
	return c
}

// startProcess runs `fedecdf server` as process name on its role's
// store (its connections named name: application_name) and waits until
// it serves (the coordinator) or stands by.
func (c *processCluster) startProcess(name string) {
	c.t.Helper()
	role := processRole(name)
	cmd := c.command("server", "--role", role, "--key", filepath.Join(c.dir, role+".key"), "--manifest", c.manifest,
		"--listen", c.addrs[name], "--upload-listen", c.upload[name], "--store", c.stores[role]+"&application_name="+name, "--log-level", "info", "--peer-check", "500ms")
	if q := c.query[name]; q != "" {
		cmd.Args = append(cmd.Args, "--query-listen", q)
	}
	p := c.launch(name, cmd)
	c.waitLog(name, p, func(log string) bool {
		return strings.Count(log, "msg=serving")+strings.Count(log, `msg="standing by`) >= c.starts[name]
	})
}

// waitLog waits until done holds of process name's log.
func (c *processCluster) waitLog(name string, p *serverProc, done func(string) bool) {
	c.t.Helper()
	for tick := time.NewTicker(20 * time.Millisecond); !done(c.logs[name].String()); {
		select {
		case <-p.exited:
			c.t.Fatalf("%s exited: %v", name, p.err)
		case <-c.ctx.Done():
			c.t.Fatalf("waiting for %s: %v", name, c.ctx.Err())
		case <-tick.C:
		}
	}
}

// party returns a party of the manifest, which spreads its uploads
// over both processes of each role and fails over between them.
func (c *processCluster) party() *client.Party {
	c.t.Helper()
	return c.partyOfManifest(c.m)
}

// partyOf returns a party that knows process k (1 or 2) of each role
// only: the manifest without the other's upload address.
func (c *processCluster) partyOf(k int) *client.Party {
	c.t.Helper()
	m := *c.m
	m.Leader.UploadAddr, m.Helper.UploadAddr = c.upload["leader"+strconv.Itoa(k)], c.upload["helper"+strconv.Itoa(k)]
	m.Leader.MoreUploadAddrs, m.Helper.MoreUploadAddrs = nil, nil
	return c.partyOfManifest(&m)
}

// partyOfManifest is a party of m retrying an upload for up to 30 s,
// as fedecdf party does for a minute (the servers limit the connection
// rate of one address, and every party here is 127.0.0.1).
func (c *processCluster) partyOfManifest(m *manifest.Manifest) *client.Party {
	c.t.Helper()
	tc := crashTransport
	tc.Attempts, tc.RetryWindow = 0, 30*time.Second
	p, err := client.NewParty(m, nil, tc)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { p.Close() })
	return p
}

// TestProcessesPerRoleSurviveSIGKILL runs two `fedecdf server`
// processes per role on one PostgreSQL schema per role. Reports
// uploaded to the standby processes only are counted by a release the
// coordinators create. Then parties of the manifest, which lists both
// processes' upload addresses, upload (spread over both) and the
// coordinating leader and helper processes are SIGKILLed mid-upload:
// the standbys take over, each party whose process died fails over to
// the other within its one Send (no upload is sent again by the test),
// and every acknowledged report is stored once at both servers; a
// release through the new coordinator counts exactly the reports both
// servers hold, each once. Last, two analysts ask at once
// for a release with budget left for one: exactly one is charged, and
// both servers' ledgers hold the same three releases.
func TestProcessesPerRoleSurviveSIGKILL(t *testing.T) {
	const first, n, killAfter = 30, 160, 50
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, first)
	for _, name := range []string{"helper1", "leader1"} {
		if !strings.Contains(c.logs[name].String(), "msg=serving") {
			t.Fatalf("%s, started first, does not coordinate:\n%s", name, c.logs[name])
		}
	}
	for _, name := range []string{"helper2", "leader2"} {
		if !strings.Contains(c.logs[name].String(), `msg="standing by`) {
			t.Fatalf("%s, started second, does not stand by:\n%s", name, c.logs[name])
		}
	}
	p := c.party()
	reports, bins := c.newReports(p, n)

	standbyOnly := newUploads()
	standbyOnly.send(ctx, []*client.Party{c.partyOf(2)}, reports[:first], nil)
	if standbyOnly.failed != 0 {
		t.Fatalf("%d of %d uploads to the standbys failed", standbyOnly.failed, first)
	}
	e, err := c.release()
	if err != nil {
		t.Fatalf("release over the reports the standbys recorded: %v", err)
	}
	if want := prefixCounts(standbyOnly.acked, bins); e.N != first || !slices.Equal(e.Counts, want) {
		t.Fatalf("release over the standbys' reports: %d reports, counts %v; want %d, %v", e.N, e.Counts, first, want)
	}
	c.checkProcesses(map[string]int{"leader1": 0, "leader2": first, "helper1": 0, "helper2": first}, "1")

	up := newUploads()
	up.tries = 1
	killed := make(chan struct{})
	up.send(ctx, []*client.Party{p}, reports[first:], func(acked int) {
		if acked == killAfter {
			c.kill("leader1")
			c.kill("helper1")
			close(killed)
		}
	})
	<-killed
	if up.failed != 0 {
		t.Errorf("%d of %d uploads failed at both processes of a role: %v", up.failed, n-first, up.err)
	}
	for _, name := range []string{"helper2", "leader2"} {
		c.waitLog(name, c.procs[name], func(log string) bool { return strings.Contains(log, "msg=serving") })
	}
	e, err = c.release()
	if err != nil {
		t.Fatalf("release through the leader process that took over: %v", err)
	}
	released := e
	c.checkProcesses(map[string]int{"leader2": 0, "helper2": 0}, "2")

	errs := make([]error, 2)
	var both sync.WaitGroup
	for i := range errs {
		both.Go(func() { _, errs[i] = c.release() })
	}
	both.Wait()
	charged := 0
	for _, err := range errs {
		switch {
		case err == nil:
			charged++
		case !errors.Is(err, ledger.ErrBudgetExhausted):
			t.Errorf("concurrent release: %v, want success or %v", err, ledger.ErrBudgetExhausted)
		}
	}
	if charged != 1 {
		t.Errorf("%d of two concurrent releases charged with budget for one; want exactly 1", charged)
	}

	c.kill("leader2")
	c.kill("helper2")
	atBoth := c.checkStored(up.acked, released, bins)
	for _, role := range []string{"leader", "helper"} {
		if releases := ledgerReleases(t, c.stores[role], c.m.Dataset); releases != 3 {
			t.Errorf("the %s's ledger holds %d releases, want 3", role, releases)
		}
	}
	t.Logf("%d acknowledged of %d, %d stored at both servers, released %d; the coordinators were killed after %d", first+len(up.acked), n, len(atBoth), released.N, killAfter)
}

// checkProcesses checks that fedecdf status lists, for each role,
// exactly the processes of want (by their upload addresses), each
// having acknowledged at least want[name] uploads, process coord of
// the role (its number) as the coordinator, first. It asks until the
// list is so or a minute passed (a hang guard: a process records itself
// every second, and a killed one drops out of the list within three,
// but under load a beat can be late).
func (c *processCluster) checkProcesses(want map[string]int, coord string) {
	c.t.Helper()
	var problems []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		st, err := analyst.AskStatus(c.ctx, c.m, c.ids["analyst"], crashTransport)
		if err != nil {
			c.t.Fatalf("status: %v", err)
		}
		if problems = c.processProblems(st, want, coord); len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	c.t.Errorf("status a minute on: %s", strings.Join(problems, "; "))
}

// processProblems lists how st's processes differ from checkProcesses'
// want and coord.
func (c *processCluster) processProblems(st *analyst.Status, want map[string]int, coord string) []string {
	var problems []string
	for _, sv := range st.Servers {
		var got []string
		for k, p := range sv.Processes {
			name := ""
			for n, addr := range c.upload {
				if addr == p.UploadAddr {
					name = n
				}
			}
			got = append(got, name)
			min, ok := want[name]
			switch {
			case !ok || processRole(name) != sv.Role:
				problems = append(problems, fmt.Sprintf("the %s lists process %s at %s, not one of %v", sv.Role, p.ID, p.UploadAddr, want))
			case p.Coordinator != (k == 0) || p.Coordinator != (name == sv.Role+coord):
				problems = append(problems, fmt.Sprintf("the %s lists %s (%d of %d) as coordinator %v; want %s%s first, the coordinator", sv.Role, name, k+1, len(sv.Processes), p.Coordinator, sv.Role, coord))
			case p.Uploads == nil || *p.Uploads < uint64(min):
				problems = append(problems, fmt.Sprintf("the %s lists %s with uploads %s, want at least %d", sv.Role, name, optionalCount(p.Uploads), min))
			}
		}
		n := 0
		for name := range want {
			if processRole(name) == sv.Role {
				n++
			}
		}
		if len(got) != n {
			problems = append(problems, fmt.Sprintf("the %s lists processes %v, want %d of %v", sv.Role, got, n, want))
		}
	}
	return problems
}

// optionalCount formats a withheld (nil) or given count.
func optionalCount(n *uint64) string {
	if n == nil {
		return "withheld"
	}
	return strconv.FormatUint(*n, 10)
}

// checkStored checks, with every process stopped, that each role's
// database holds every acknowledged report (once: storedIDs fails on a
// report stored twice) and that the release e counts exactly the
// reports both hold, each once; it returns those.
func (c *processCluster) checkStored(acked map[payload.ReportID]bool, e *analyst.ECDF, bins map[payload.ReportID]int) map[payload.ReportID]bool {
	t := c.t
	t.Helper()
	held := map[string]map[payload.ReportID]bool{}
	for _, role := range []string{"leader", "helper"} {
		held[role] = storedIDs(t, c.stores[role], c.m.Dataset)
		for id := range acked {
			if !held[role][id] {
				t.Errorf("acknowledged report %v is not in the %s's database", id, role)
			}
		}
	}
	atBoth := map[payload.ReportID]bool{}
	for id := range held["leader"] {
		if held["helper"][id] {
			atBoth[id] = true
		}
	}
	if want := prefixCounts(atBoth, bins); e.N != int64(len(atBoth)) || !slices.Equal(e.Counts, want) {
		t.Errorf("release over %d reports, counts %v; want the %d both servers hold, each once: %v", e.N, e.Counts, len(atBoth), want)
	}
	return atBoth
}

// newReports prepares n reports of DemoInstances with p, and their
// bins by report ID.
func (c *processCluster) newReports(p *client.Party, n int) ([]*client.Report, map[payload.ReportID]int) {
	c.t.Helper()
	g, err := c.m.NewGrid()
	if err != nil {
		c.t.Fatal(err)
	}
	reports := make([]*client.Report, n)
	bins := map[payload.ReportID]int{}
	for j, x := range client.DemoInstances(n, 27) {
		if reports[j], err = p.NewReport(x); err != nil {
			c.t.Fatal(err)
		}
		if bins[reports[j].ID], err = g.Bin(x.Score); err != nil {
			c.t.Fatal(err)
		}
	}
	return reports, bins
}

// prefixCounts are the prefix counts of the reports ids of 1-based bins.
func prefixCounts(ids map[payload.ReportID]bool, bins map[payload.ReportID]int) []int64 {
	want := make([]int64, crashBins)
	for id := range ids {
		for i := bins[id] - 1; i < len(want); i++ {
			want[i]++
		}
	}
	return want
}

// uploads are the reports a set of parties got acknowledged, and how
// many failed (the last failure err), each Sent at most tries times
// (40 if 0).
type uploads struct {
	mu     sync.Mutex
	acked  map[payload.ReportID]bool
	failed int
	err    error
	tries  int
}

func newUploads() *uploads { return &uploads{acked: map[payload.ReportID]bool{}} }

// send uploads reports, 6 at a time, report j first through party j
// mod len(parties) and then the next, pausing between tries (as a party
// running fedecdf party again would: PostgreSQL restarting takes
// seconds; the servers limit the connection rate of one address, and
// every party here is 127.0.0.1). afterAck is called with the number
// acknowledged after each acknowledgement.
func (u *uploads) send(ctx context.Context, parties []*client.Party, reports []*client.Report, afterAck func(acked int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for j, r := range reports {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var err error
			tries := u.tries
			if tries == 0 {
				tries = 40
			}
			for try := range tries {
				if _, err = parties[(j+try)%len(parties)].Send(ctx, r); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			u.mu.Lock()
			defer u.mu.Unlock()
			if err != nil {
				u.failed++
				u.err = err
				return
			}
			u.acked[r.ID] = true
			if afterAck != nil {
				afterAck(len(u.acked))
			}
		})
	}
	wg.Wait()
}

// ledgerReleases returns the number of releases charged on the ledger
// of dataset in the store at dsn (no process running on it).
func ledgerReleases(t *testing.T, dsn, dataset string) uint64 {
	t.Helper()
	s, err := store.OpenBackend(dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.Releases(dataset)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// armFault makes the nth row inserted into table (fedecdf_releases or
// fedecdf_charges) of the schema of dsn sleep for a minute inside its
// transaction: the write of that step of release creation hangs, so
// that the test can kill the process making it. The count is a
// sequence, which a killed transaction does not roll back.
func armFault(t *testing.T, dsn, table string, nth int) {
	t.Helper()
	pgtest.Exec(t, dsn, fmt.Sprintf(`CREATE SEQUENCE t_fault_%[1]s;
		CREATE FUNCTION t_fault_%[1]s() RETURNS trigger LANGUAGE plpgsql AS $f$
		BEGIN
			IF nextval('t_fault_%[1]s') = %[2]d THEN PERFORM pg_sleep(60); END IF;
			RETURN NEW;
		END $f$;
		CREATE TRIGGER t_fault BEFORE INSERT ON %[1]s FOR EACH ROW EXECUTE FUNCTION t_fault_%[1]s();`, table, nth))
}

// queryInt runs a query of one int64 on the database of dsn.
func queryInt(t *testing.T, dsn, sql string) (n int64) {
	t.Helper()
	pgtest.QueryRow(t, dsn, sql, &n)
	return n
}

// TestCoordinatorKilledDuringRelease kills the coordinating process of
// the leader, or of the helper, while it writes each step of release
// creation (the leader's pending record, its charge, its release
// record; the helper's charge), the write hanging in the database:
// the standby takes over and the release is completed or aborted, so
// that both ledgers hold the same releases, none twice; a new release
// then counts every report once.
func TestCoordinatorKilledDuringRelease(t *testing.T) {
	const n = 20
	for _, c := range []struct {
		name, role, table string
		nth               int
	}{
		{"the leader's pending record", "leader", "fedecdf_releases", 1},
		{"the leader's charge", "leader", "fedecdf_charges", 1},
		{"the leader's release record", "leader", "fedecdf_releases", 2},
		{"the helper's charge", "helper", "fedecdf_charges", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			pc := newProcessCluster(t, ctx, n)
			p := pc.party()
			reports, bins := pc.newReports(p, n)
			up := newUploads()
			up.send(ctx, []*client.Party{p}, reports, nil)
			if up.failed != 0 {
				t.Fatalf("%d uploads failed", up.failed)
			}
			dsn := pc.stores[c.role]
			armFault(t, dsn, c.table, c.nth)
			// One attempt: retried, the call cut by the kill could reach
			// the standby once it took over, and be answered (the
			// handlers are idempotent) or not, as the load decides.
			once := crashTransport
			once.Attempts = 1
			failed := make(chan error, 1)
			go func() {
				_, err := pc.releaseOver(once)
				failed <- err
			}()
			backend := `SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%` + c.table + `%'`
			for queryInt(t, dsn, `SELECT count(*) FROM (`+backend+`) b`) == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			pc.kill(c.role + "1")
			// The database notices a dead client only when it next
			// reads from it: end the hanging write as it would.
			queryInt(t, dsn, `SELECT count(pg_terminate_backend(pid)) FROM (`+backend+`) b`)
			// A killed leader coordinator fails the analyst's call (its
			// one attempt); a killed helper coordinator may be replaced
			// before the leader's retry, which then completes the
			// release: both outcomes are allowed, the ledgers below must
			// agree.
			if err := <-failed; err == nil && c.role == "leader" {
				t.Fatalf("the release succeeded though the %s's coordinator was killed creating it", c.role)
			}
			pc.waitLog(c.role+"2", pc.procs[c.role+"2"], func(log string) bool { return strings.Contains(log, "msg=serving") })
			var charges [2]int64
			for deadline := time.Now().Add(30 * time.Second); ; {
				for k, role := range []string{"leader", "helper"} {
					charges[k] = queryInt(t, pc.stores[role], `SELECT count(*) FROM fedecdf_charges`)
				}
				if charges[0] == charges[1] && queryInt(t, pc.stores["leader"], `SELECT count(*) FROM fedecdf_releases`) == charges[0] {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("30 s after the take-over: charges leader %d, helper %d; want equal, every leader record charged", charges[0], charges[1])
				}
				time.Sleep(100 * time.Millisecond)
			}
			e, err := pc.release()
			if err != nil {
				t.Fatalf("a release after the take-over: %v", err)
			}
			if want := prefixCounts(up.acked, bins); e.N != n || !slices.Equal(e.Counts, want) {
				t.Errorf("release after the take-over: %d reports, counts %v; want %d, %v", e.N, e.Counts, n, want)
			}
			t.Logf("the interrupted release was %s", map[int64]string{0: "aborted", 1: "completed"}[charges[0]])
		})
	}
}

// TestProcessesPerRoleAcrossPostgresRestart restarts PostgreSQL
// (pg_ctl restart -m fast) while parties upload to both processes of
// each role: writes cut by the restart are not acknowledged and are
// retried, every process reconnects, each role has one coordinator
// again (the one before, or a standby that took over while the
// former one stands by again, "coordination lost"), every acknowledged report is
// stored once at both servers, and a release counts exactly the reports
// both hold.
func TestProcessesPerRoleAcrossPostgresRestart(t *testing.T) {
	const first, n = 20, 200
	restart := pgtest.Restart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, first)
	p := c.party()
	reports, bins := c.newReports(p, n)
	up := newUploads()
	restarted := make(chan error, 1)
	up.send(ctx, []*client.Party{p}, reports, func(acked int) {
		if acked == first {
			go func() {
				cmd := exec.CommandContext(ctx, "sh", "-c", restart)
				cmd.WaitDelay = 10 * time.Second // the restarted postmaster may hold the output pipe
				out, err := cmd.CombinedOutput()
				if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
					err = fmt.Errorf("restarting PostgreSQL: %v\n%s", err, out)
				} else {
					err = nil
				}
				restarted <- err
			}()
		}
	})
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	if up.failed != 0 {
		t.Errorf("%d of %d uploads failed across PostgreSQL's restart", up.failed, n)
	}
	e := c.releaseRetrying(t) // a take-over may be under way
	for _, name := range []string{"leader1", "leader2", "helper1", "helper2"} {
		select {
		case <-c.procs[name].exited:
			if !strings.Contains(c.logs[name].String(), "coordination lost") {
				t.Errorf("%s exited (%v) without losing its coordination", name, c.procs[name].err)
			}
			c.procs[name] = nil
		default:
		}
		log := c.logs[name].String()
		t.Logf("%s: %d writes not acknowledged across the restart; took over: %v, lost its coordination: %v", name,
			strings.Count(log, "could not persist a report"), strings.Contains(log, "taking over"), strings.Contains(log, "coordination lost"))
	}
	for _, name := range []string{"leader1", "leader2", "helper1", "helper2"} {
		if c.procs[name] != nil {
			c.kill(name)
		}
	}
	c.checkStored(up.acked, e, bins)
}
