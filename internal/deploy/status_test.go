package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// analyst returns a client of the deployment under the analyst's key.
func (d *deployment) analyst() *analyst.Analyst {
	d.t.Helper()
	a, err := analyst.NewAnalyst(d.m, d.analystID, fast)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { a.Close() })
	return a
}

// status asks for the deployment's status under the analyst's key.
func (d *deployment) status() *analyst.Status { return d.statusAs(d.analystID) }

func (d *deployment) statusAs(id *manifest.Identity) *analyst.Status {
	d.t.Helper()
	st, err := analyst.AskStatus(context.Background(), d.m, id, fast)
	if err != nil {
		d.t.Fatalf("status: %v", err)
	}
	return st
}

// upload sends one server one upload directly, as a party does.
func upload(p *client.Party, to transport.PeerID, up *protocol.Upload) error {
	_, err := protocol.Call[*protocol.Ack](context.Background(), p.Host().Conn(p2p.ReportProtocol), to, up)
	return err
}

// withOrphans submits inst[:3] to both servers, inst[3] to the leader
// only and inst[4] to the helper only, and inst[5]'s leader share to both
// (the helper refuses it: mismatch), and then runs the leader's
// verification: the three reports both hold are counted at both, inst[5]
// is rejected at both (decided, so no one server's alone), and inst[3]
// and inst[4] stay held undecided at one server each.
func (d *deployment) withOrphans(inst []party.Instance) {
	d.t.Helper()
	p := d.newParty()
	for _, x := range inst[:3] {
		if _, err := p.Submit(context.Background(), x); err != nil {
			d.t.Fatal(err)
		}
	}
	leaderOnly, err := p.NewReport(inst[3])
	if err != nil {
		d.t.Fatal(err)
	}
	if err := upload(p, manifest.LeaderName, leaderOnly.Leader); err != nil {
		d.t.Fatal(err)
	}
	helperOnly, err := p.NewReport(inst[4])
	if err != nil {
		d.t.Fatal(err)
	}
	if err := upload(p, manifest.HelperName, helperOnly.Helper); err != nil {
		d.t.Fatal(err)
	}
	forged, err := p.NewReport(inst[5])
	if err != nil {
		d.t.Fatal(err)
	}
	if err := upload(p, manifest.LeaderName, forged.Leader); err != nil {
		d.t.Fatal(err)
	}
	if err := upload(p, manifest.HelperName, forged.Leader); err == nil {
		d.t.Fatal("the helper accepted the leader's DCF key")
	}
	if err := d.leader.srv.Verify(context.Background()); err != nil {
		d.t.Fatal(err)
	}
}

// serverCounts is what a status says of one server's reports: counted,
// held undecided, and of those held, the ones held there only.
type serverCounts struct{ counted, held, oneServer int }

func countsOf(t *testing.T, st *analyst.Status) map[string]serverCounts {
	t.Helper()
	got := map[string]serverCounts{}
	for _, sv := range st.Servers {
		if sv.Reports == nil || sv.Held == nil || sv.OneServerOnly == nil {
			t.Fatalf("%s: counts withheld in %+v", sv.Role, st)
		}
		got[sv.Role] = serverCounts{*sv.Reports, *sv.Held, *sv.OneServerOnly}
	}
	return got
}

// TestStatusShowsOneServerOnlyReports: after an upload only the leader
// got, one only the helper got and one the helper refused, status shows
// at each server the reports it counts, those it holds undecided and, of
// them, those it alone holds (the refused report is rejected at both:
// decided, it is no one server's alone), the number both know, the
// rejections and the helper's refusal among its last errors, and both
// ledgers; a release sums the reports both counted.
func TestStatusShowsOneServerOnlyReports(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	inst := instances(6, 11)
	d.withOrphans(inst)
	st := d.status()
	if !st.CountsPublic || !st.LeaderReachesHelper || st.ReportsBoth == nil || *st.ReportsBoth != 4 || st.Protocol != protocol.Version {
		t.Fatalf("status %+v: want counts public, the helper reached, 4 reports known to both (3 counted, 1 rejected)", st)
	}
	want := map[string]serverCounts{"leader": {3, 1, 1}, "helper": {3, 1, 1}}
	if got := countsOf(t, st); got["leader"] != want["leader"] || got["helper"] != want["helper"] {
		t.Errorf("reports (counted, held, one server only) %v, want %v", got, want)
	}
	for _, sv := range st.Servers {
		if !maps.Equal(sv.Rejected, map[string]int{"mismatch": 1}) {
			t.Errorf("%s rejected %v, want the forged report as a mismatch", sv.Role, sv.Rejected)
		}
	}
	helper := st.Servers[1]
	if helper.Role != "helper" || !strings.Contains(strings.Join(helper.LastErrors, "\n"), "report refused") {
		t.Errorf("the helper's last errors %q lack its refusal of the leader's key", helper.LastErrors)
	}
	checkExact(t, d.query(), plainCounts(t, d.m, inst[:3]))
	st = d.status()
	for _, sv := range st.Servers {
		if sv.Spent.Epsilon != hugeEpsilon || sv.Total.Epsilon != 4*hugeEpsilon || len(sv.Releases) != 1 || *sv.Releases[0].Reports != 3 {
			t.Errorf("%s after a release: spent %v of %v, releases %+v; want one over 3 reports", sv.Role, sv.Spent, sv.Total, sv.Releases)
		}
	}
}

// TestPurgeOrphans: a leader configured to purge one-server-only
// reports removes its own at the next comparison, from memory and store
// (a restart does not bring it back), while the helper, which purges
// nothing, keeps its own, and no report held by both is lost: a release
// sums all three.
func TestPurgeOrphans(t *testing.T) {
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		if c.Role == server.Leader {
			c.PurgeAfter = time.Nanosecond
		}
	})
	inst := instances(6, 12)
	d.withOrphans(inst)
	want := map[string]serverCounts{"leader": {3, 0, 0}, "helper": {3, 1, 1}}
	if got := countsOf(t, d.status()); got["leader"] != want["leader"] || got["helper"] != want["helper"] {
		t.Errorf("after the purge: reports (counted, held, one server only) %v, want %v", got, want)
	}
	listen := d.leader.Addrs()[0].String()
	if err := d.leader.Close(); err != nil {
		t.Fatal(err)
	}
	d.leader = d.start(server.Leader, listen)
	for _, s := range []struct {
		srv  *Server
		want int
	}{{d.leader, 3}, {d.helper, 4}} { // the 3 both count, and the helper's own inst[4]; the leader's rejected inst[5] left with its upload, its verdict kept
		if n, err := s.srv.NumReports(); err != nil || n != s.want {
			t.Errorf("%s store holds %d reports (%v), want %d", s.srv.cfg.Role, n, err, s.want)
		}
	}
	checkExact(t, d.query(), plainCounts(t, d.m, inst[:3]))
}

// Under add/remove the number of reports is private: status gives an
// analyst no count and no error line (which names reports), only the
// ledgers and releases; an operator of the manifest gets them.
func TestStatusWithholdsCountsUnderAddRemove(t *testing.T) {
	d := newDeploymentOf(t, hugeEpsilon, 1, manifest.UploadDirect, "addremove")
	d.withOrphans(instances(6, 13))
	st := d.status()
	if st.CountsPublic || st.ReportsBoth != nil {
		t.Errorf("status %+v gives counts under add/remove", st)
	}
	for _, sv := range st.Servers {
		if sv.Reports != nil || sv.Held != nil || sv.OneServerOnly != nil || sv.LastErrors != nil || sv.Rejected != nil {
			t.Errorf("%s: reports %v, held %v, one server only %v, errors %q, rejected %v under add/remove", sv.Role, sv.Reports, sv.Held, sv.OneServerOnly, sv.LastErrors, sv.Rejected)
		}
	}
	op := d.statusAs(d.operatorID)
	if got := countsOf(t, op); !op.CountsPublic || got["leader"] != (serverCounts{3, 1, 1}) || got["helper"] != (serverCounts{3, 1, 1}) {
		t.Errorf("the operator's status: counts shown %v, %v; want each server counting 3, holding 1 alone", op.CountsPublic, got)
	}
}

// An operator's key is for status only: the leader refuses it a release
// (nothing is charged) and a query.
func TestOperatorMayNotRelease(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	p := d.newParty()
	if _, err := p.Submit(context.Background(), instances(1, 18)[0]); err != nil {
		t.Fatal(err)
	}
	book, err := d.m.Book(false)
	if err != nil {
		t.Fatal(err)
	}
	h, err := p2p.New(p2p.Config{Key: d.operatorID.Key, Peers: book, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	params, err := d.m.MechanismParams()
	if err != nil {
		t.Fatal(err)
	}
	create := &protocol.CreateRelease{Dataset: d.m.Dataset, Mechanism: params, Components: []payload.Component{payload.Count}}
	if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), h.Conn(p2p.QueryProtocol), manifest.LeaderName, create); err == nil || !strings.Contains(err.Error(), "may ask for status only") {
		t.Errorf("an operator's release: %v, want a refusal", err)
	}
	for _, sv := range d.status().Servers {
		if sv.Spent.Epsilon != 0 {
			t.Errorf("%s spent ε %g on an operator's refused release", sv.Role, sv.Spent.Epsilon)
		}
	}
}

// Status is for the manifest's analysts: a party's key is refused by
// the leader, and the helper answers status requests from the leader
// only.
func TestStatusRefusesUnauthorisedKeys(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	p := d.newParty()
	req := &protocol.StatusRequest{Dataset: d.m.Dataset}
	for _, c := range []struct {
		to   transport.PeerID
		conn transport.Conn
	}{{manifest.LeaderName, p.Host().Conn(p2p.QueryProtocol)}, {manifest.HelperName, p.Host().Conn(p2p.PeerProtocol)}} {
		t.Run(string(c.to), func(t *testing.T) {
			_, err := protocol.Call[*protocol.Status](context.Background(), c.conn, c.to, req)
			if !p2p.IsRefused(err) {
				t.Errorf("status from a party's key: %v, want a refusal", err)
			}
		})
	}
	if _, err := analyst.NewAnalyst(d.m, newIdentity(t), fast); !errors.Is(err, analyst.ErrNotAnalyst) {
		t.Errorf("an analyst client with another key: %v", err)
	}
}

// A helper that is stopped, or hung (its address accepts connections
// and never answers), shows as unreachable, with the cause, in a status
// that returns after the leader's peer timeout; the leader logs a
// warning, kept among its last errors.
func TestStatusHelperUnreachable(t *testing.T) {
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	go func() {
		var held []net.Conn // never answered, closed with the listener's test
		for {
			c, err := hung.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	port := hung.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		name, cause string
		addr        func(d *deployment) string
	}{
		{"stopped", "connection refused", func(d *deployment) string { return d.m.Helper.Addrs[0] }},
		{"hung", "no answer within the peer timeout 500ms", func(*deployment) string { return "/ip4/127.0.0.1/tcp/" + strconv.Itoa(port) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(cfg *ServerConfig) {
				cfg.PeerTimeout = 500 * time.Millisecond
			})
			d.helper.Close()
			d.m.Helper.Addrs = []string{c.addr(d)}
			listen := d.leader.Addrs()[0].String()
			d.leader.Close()
			d.leader = d.start(server.Leader, listen)
			st := d.status()
			if st.LeaderReachesHelper || len(st.Servers) != 2 || st.Servers[1].Reachable || !strings.Contains(st.Servers[1].Error, c.cause) {
				t.Fatalf("status %+v: want the helper unreachable: %s", st, c.cause)
			}
			if leader := st.Servers[0]; !strings.Contains(strings.Join(leader.LastErrors, "\n"), "helper not reachable") {
				t.Errorf("the leader's last errors %q lack the unreachable helper", leader.LastErrors)
			}
		})
	}
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logger returns a text logger at level writing to s.
func (s *syncBuffer) logger(t *testing.T, level string) *slog.Logger {
	t.Helper()
	l, err := NewLogger(s, "text", level)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// waitFor waits until a line matching pattern is logged (what: for the
// failure message); the minute allowed is a hang guard, not a threshold.
func (s *syncBuffer) waitFor(t *testing.T, pattern, what string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for deadline := time.Now().Add(time.Minute); !re.MatchString(s.String()); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line of %s in a minute:\n%s", what, s.String())
		}
	}
}

// NewLogger writes one line per event in either format, flattening
// multi-line errors, at the level asked; a bad format or level is
// refused naming its flag.
func TestNewLogger(t *testing.T) {
	for _, format := range LogFormats {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			l, err := NewLogger(&out, format, "warn")
			if err != nil {
				t.Fatal(err)
			}
			l.Info("hidden")
			l.Warn("cannot reach the helper", "err", errors.New("all dials failed\n  * [/ip4/10.0.0.2/tcp/4001] connection refused"), "note", "a\nb")
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 1 || strings.Contains(lines[0], "hidden") || strings.Contains(lines[0], `\n`) || !strings.Contains(lines[0], "all dials failed |") {
				t.Fatalf("log:\n%s\nwant one warning line, newlines flattened", out.String())
			}
			if format == "json" {
				var v map[string]any
				if err := json.Unmarshal([]byte(lines[0]), &v); err != nil || v["level"] != "WARN" {
					t.Errorf("json line %s: %v", lines[0], err)
				}
			}
		})
	}
	for _, c := range []struct{ format, level, flag string }{{"xml", "info", "--log-format"}, {"text", "loud", "--log-level"}} {
		if _, err := NewLogger(io.Discard, c.format, c.level); err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("NewLogger(%s, %s): %v, want an error naming %s", c.format, c.level, err, c.flag)
		}
	}
}

// The servers log each accepted report at DEBUG, a refused one at WARN
// with the reason, and, at the summary interval, one INFO line of the
// uploads and what the server holds.
func TestServerLogs(t *testing.T) {
	var logs syncBuffer
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Logger, c.Summary = logs.logger(t, "debug"), 10*time.Millisecond
	})
	d.withOrphans(instances(6, 14))
	for _, want := range []string{"level=DEBUG msg=\"report accepted\" role=leader", "level=WARN msg=\"report refused\" role=helper", "share does not match report: key for server 0"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
	logs.waitFor(t, `msg=summary role=leader interval=10ms uploads_accepted=\d+ .* reports_counted=3 reports_held=1 one_server_only=\d `, "a summary of the leader's 3 counted reports and 1 held")
}

// The metrics endpoint serves the counters and gauges in the
// Prometheus text format.
func TestMetrics(t *testing.T) {
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Metrics = "127.0.0.1:0"
	})
	d.withOrphans(instances(6, 15))
	d.status()
	resp, err := http.Get("http://" + d.helper.metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE fedecdf_reports_accepted_total counter\n",
		`fedecdf_reports_accepted_total{role="helper",dataset="test"} 4`,
		`fedecdf_reports_rejected_total{role="helper",dataset="test"} 1`,
		`fedecdf_reports_counted{role="helper",dataset="test"} 3`,
		`fedecdf_reports_held{role="helper",dataset="test"} 1`,
		`fedecdf_reports_one_server_only{role="helper",dataset="test"} 1`,
		`fedecdf_reports_verification_rejected{role="helper",dataset="test",reason="mismatch"} 1`,
		`fedecdf_peer_reachable{role="helper",dataset="test"} 1`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q:\n%s", want, b)
		}
	}
}

// The leader's periodic check notices a stopped helper before any
// request needs it: it logs a warning saying it cannot reach it.
func TestLeaderWarnsWhenHelperStops(t *testing.T) {
	var logs syncBuffer
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Logger, c.PeerCheck, c.PeerTimeout = logs.logger(t, "info"), 10*time.Millisecond, time.Second
	})
	logs.waitFor(t, `level=INFO msg="the helper is reachable" role=leader`, "the helper reached")
	d.helper.Close()
	logs.waitFor(t, `level=WARN msg="helper not reachable" role=leader err=`, "the stopped helper")
}

// The leader logs that the helper runs the same manifest once, at its
// first contact, not again at its first periodic check: watchHelper
// logs a change only, and starts from what firstContact found.
func TestLeaderLogsAgreementOnce(t *testing.T) {
	var logs syncBuffer
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Logger, c.PeerCheck = logs.logger(t, "info"), 10*time.Millisecond
	})
	checkedAt := func() time.Time {
		d.leader.peer.mu.Lock()
		defer d.leader.peer.mu.Unlock()
		return d.leader.peer.at
	}
	// Each periodic check that reaches the helper sets the peer's time:
	// wait for two after the first contact's.
	deadline := time.Now().Add(time.Minute)
	for at, checks := checkedAt(), 0; checks < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the leader checked the helper %d times in a minute, want 2:\n%s", checks, logs.String())
		}
		if now := checkedAt(); now.After(at) {
			at, checks = now, checks+1
		}
	}
	agreed := regexp.MustCompile(`level=INFO msg="the helper runs the same manifest" role=leader`)
	if n := len(agreed.FindAllString(logs.String(), -1)); n != 1 {
		t.Fatalf("the leader logged the helper's agreement %d times, want once:\n%s", n, logs.String())
	}
}

// A corrupt leader that tells a purging helper it holds no report at all
// (a comparison over an empty list) makes it purge only the reports no
// release includes: every recorded release still answers over its own
// reports, exactly. (The leader can exclude any report from a release
// anyway, by not offering it; the purge gives it nothing more.)
func TestCorruptLeaderCannotPurgeReleasedReports(t *testing.T) {
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.PeerCheck = time.Hour // inst[3] stays undecided: no periodic verification decides it
		if c.Role == server.Helper {
			c.PurgeAfter = time.Nanosecond
		}
	})
	inst := instances(4, 16)
	p := d.newParty()
	for _, x := range inst[:3] {
		if _, err := p.Submit(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	a := d.analyst()
	first, err := a.ECDF(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Submit(context.Background(), inst[3]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.helper.helperStatus(&protocol.StatusRequest{Dataset: d.m.Dataset, Compare: true}); err != nil {
		t.Fatal(err)
	}
	if n, err := d.helper.NumReports(); err != nil || n != 3 {
		t.Errorf("the helper holds %d reports (%v) after the corrupt comparison, want the release's 3", n, err)
	}
	id, err := analyst.ParseReleaseID(first.Release)
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.ReadRelease(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, again, plainCounts(t, d.m, inst[:3]))
}

// Re-sync: a party that sends the same report again (party --csv rerun
// with its --row-key) completes an upload that reached the leader only;
// the leader acknowledges a duplicate, the helper stores it, and status
// shows no one-server-only report left.
func TestResyncByResending(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	p := d.newParty()
	r, err := p.NewReport(instances(1, 17)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := upload(p, manifest.LeaderName, r.Leader); err != nil { // the helper was down
		t.Fatal(err)
	}
	if err := d.leader.srv.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := countsOf(t, d.status())["leader"]; got != (serverCounts{0, 1, 1}) {
		t.Fatalf("leader (counted, held, one server only) %v before the re-sync, want {0 1 1}: held undecided, the helper lacking it", got)
	}
	if dup, err := p.Send(context.Background(), r); err != nil || !dup {
		t.Fatalf("resending: duplicate %v, %v", dup, err)
	}
	if err := d.leader.srv.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := d.status()
	if got := countsOf(t, st); got["leader"] != (serverCounts{1, 0, 0}) || got["helper"] != (serverCounts{1, 0, 0}) || *st.ReportsBoth != 1 {
		t.Errorf("after the re-sync: %v, %d known to both; want each counting the report, none alone", got, *st.ReportsBoth)
	}
}

// BenchmarkCompareReportSets is the helper's work in one comparison of
// report sets of a million reports, 1% held by one server only: the
// digest of its set and the two set differences.
func BenchmarkCompareReportSets(b *testing.B) {
	const n = 1_000_000
	leader, helper := make([]payload.ReportID, n), make([]payload.ReportID, n)
	for i := range n {
		leader[i] = payload.ReportID{byte(i >> 16), byte(i >> 8), byte(i), 1}
		helper[i] = leader[i]
		if i%100 == 0 {
			helper[i][3] = 2
		}
	}
	for b.Loop() {
		_ = payload.Digest(helper)
		both, _ := intersectIDs(leader, helper)
		_, _ = intersectIDs(helper, both)
	}
}

// httpGet returns the status code and body of a GET of url.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The metrics listener serves the health probes: /healthz while the
// process serves, /readyz ready once the start-up check reached the
// helper (no periodic check runs here), not ready with the reason once
// the helper stopped; the peer gauge reads 1 right after a start, so an
// alert on it does not fire on every leader restart.
func TestHealthProbes(t *testing.T) {
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Metrics, c.PeerCheck = "127.0.0.1:0", time.Hour
	})
	base := "http://" + d.leader.metricsAddr
	if code, body := httpGet(t, base+"/metrics"); code != 200 || !strings.Contains(body, `fedecdf_peer_reachable{role="leader",dataset="test"} 1`) {
		t.Errorf("peer gauge after the start-up check: %d\n%s", code, body)
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready\nstore: open\nhelper: reachable", "/": "/readyz"} {
		if code, body := httpGet(t, base+path); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s = %d %q, want 200 and %q", path, code, body, want)
		}
	}
	if code, body := httpGet(t, "http://"+d.helper.metricsAddr+"/readyz"); code != 200 || !strings.HasPrefix(body, "ready\n") {
		t.Errorf("helper /readyz = %d %q", code, body)
	}
	if code, _ := httpGet(t, base+"/nothing"); code != http.StatusNotFound {
		t.Errorf("GET /nothing = %d, want 404", code)
	}
	d.helper.Close()
	_, _ = analyst.AskStatus(context.Background(), d.m, d.analystID, fast) // the leader checks the helper
	if code, body := httpGet(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready") || !strings.Contains(body, "helper: not reachable") {
		t.Errorf("/readyz with the helper down = %d %q, want 503 naming the helper", code, body)
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz with the helper down = %d, want 200 (the leader itself serves)", code)
	}
}
