package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// standbyAnalyst is an analyst asking the standby leader process
// (leader2's --query-listen address) first.
func (c *processCluster) standbyAnalyst() *analyst.Analyst {
	c.t.Helper()
	a, err := analyst.NewAnalystAt(c.m, c.ids["analyst"], crashTransport, []ma.Multiaddr{ma.StringCast(c.query["leader2"])})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { a.Close() })
	return a
}

// uploadAll uploads n new reports through parties of the manifest and
// returns them, the acknowledged ones and their bins.
func (c *processCluster) uploadAll(n int) ([]*client.Report, map[payload.ReportID]bool, map[payload.ReportID]int) {
	c.t.Helper()
	p := c.party()
	reports, bins := c.newReports(p, n)
	up := newUploads()
	up.send(c.ctx, []*client.Party{p}, reports, nil)
	if up.failed != 0 {
		c.t.Fatalf("%d of %d uploads failed: %v", up.failed, n, up.err)
	}
	return reports, up.acked, bins
}

// writes counts the rows a request could write at role's store: ledger
// charges, release records (pending ones included) and verdicts.
func (c *processCluster) writes(role string) string {
	c.t.Helper()
	dsn := c.stores[role]
	return fmt.Sprintf("charges %d, releases %d, verdicts %d",
		queryInt(c.t, dsn, "SELECT count(*) FROM fedecdf_charges"),
		queryInt(c.t, dsn, "SELECT count(*) FROM fedecdf_releases"),
		queryInt(c.t, dsn, "SELECT count(*) FROM fedecdf_verdicts"))
}

// TestStandbyAnswersReads runs two leader and two helper processes on
// PostgreSQL with noise of ε = 1 (so that two draws differ). A read of
// an existing release asked of the standby leader process is answered
// by the standby itself (nothing redirected) with exactly the
// coordinator's noisy counts. A new release asked of the standby is
// refused by it (protocol.ErrStandby), creates and charges nothing
// there, and the analyst's client gets it from the coordinator: one
// charge at each server. With the coordinating leader SIGKILLed, reads
// of the old releases through the standby's address still return the
// same counts. The standby's status (fedecdf status --leader-process)
// equals the coordinator's in what the database holds (ledger,
// releases, report counts, processes), says a standby answered, naming
// the coordinator, and is still answered with the coordinator killed.
func TestStandbyAnswersReads(t *testing.T) {
	const n = 40
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, n, "--epsilon", "1", "--budget-epsilon", "10")
	_, acked, bins := c.uploadAll(n)
	e, err := c.release()
	if err != nil {
		t.Fatalf("release at the coordinator: %v", err)
	}
	if slices.Equal(e.Counts, prefixCounts(acked, bins)) {
		t.Fatalf("the release's counts %v carry no noise at ε = 1: a read could not tell two noise draws apart", e.Counts)
	}
	id, err := analyst.ParseReleaseID(e.Release)
	if err != nil {
		t.Fatal(err)
	}
	a := c.standbyAnalyst()
	read, err := a.ReadRelease(ctx, id)
	switch {
	case err != nil:
		t.Fatalf("reading release %v through the standby: %v", id, err)
	case a.Redirected() != 0:
		t.Errorf("the standby refused %d reads of an existing release, want it to answer them", a.Redirected())
	case !slices.Equal(read.Counts, e.Counts) || read.N != e.N:
		t.Errorf("the standby answered %d reports %v, the coordinator %d %v", read.N, read.Counts, e.N, e.Counts)
	}

	before := map[string]string{"leader": c.writes("leader"), "helper": c.writes("helper")}
	second, err := a.ECDF(ctx)
	if err != nil {
		t.Fatalf("a new release asked of the standby: %v", err)
	}
	if a.Redirected() != 1 {
		t.Errorf("%d requests redirected to the coordinator, want 1 (the new release)", a.Redirected())
	}
	for _, role := range []string{"leader", "helper"} {
		if charges := queryInt(t, c.stores[role], "SELECT count(*) FROM fedecdf_charges"); charges != 2 {
			t.Errorf("the %s's ledger holds %d charges after the redirected release, want 2 (%s before)", role, charges, before[role])
		}
	}

	c.uploadAll(5) // since the standby built its releases: its status reloads them
	var coord, standby *analyst.Status
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		// The coordinator reads the reports a standby recorded every half
		// second; the minute is a hang guard (under load 5 s was not).
		coord, standby = c.statusAt(nil), c.statusAt([]ma.Multiaddr{ma.StringCast(c.query["leader2"])})
		if dbStatus(standby) == dbStatus(coord) || time.Now().After(deadline) {
			break
		}
	}
	if got, want := dbStatus(standby), dbStatus(coord); got != want {
		t.Errorf("the standby's status differs from the coordinator's in what the database holds:\n standby     %s\n coordinator %s", got, want)
	}
	if sv := coord.Servers[0]; sv.Reports == nil || *sv.Reports+*sv.Held != n+5 {
		t.Errorf("the coordinator's status: %s; want %d reports counted or held", dbStatus(coord), n+5)
	}
	if len(coord.Servers[0].Releases) != 2 {
		t.Errorf("the coordinator's status lists %d releases, want 2", len(coord.Servers[0].Releases))
	}
	if h := standby.Servers[1]; h.Reachable || !strings.Contains(h.Error, "standby") || !strings.Contains(h.Error, c.addrs["leader1"]) {
		t.Errorf("the standby's status shows the helper %+v, want it not reached, saying a standby answered and naming the coordinator at %s", h, c.addrs["leader1"])
	}

	c.kill("leader1")
	if killed := c.statusAt([]ma.Multiaddr{ma.StringCast(c.query["leader2"])}); releasesOf(killed) != releasesOf(coord) {
		t.Errorf("status through leader2 with leader1 killed lists releases %s, want %s", releasesOf(killed), releasesOf(coord))
	}
	for _, want := range []*analyst.ECDF{e, second} {
		id, _ := analyst.ParseReleaseID(want.Release)
		got, err := c.standbyAnalyst().ReadRelease(ctx, id)
		if err != nil {
			t.Fatalf("reading release %v through leader2 with leader1 killed: %v", id, err)
		}
		if !slices.Equal(got.Counts, want.Counts) {
			t.Errorf("release %v through leader2 with leader1 killed: %v, want %v", id, got.Counts, want.Counts)
		}
	}
	c.kill("leader2")
	c.kill("helper1")
	c.kill("helper2")
}

// TestStandbyWritesNothing is the adversary test: an analyst (or
// operator) sending every request type, well formed or not, to the
// standby leader process's query address cannot make it write a
// charge, a release record or a verdict; each request but a query of
// an existing release or a status request is refused, the ones only a coordinator serves
// (a query of a release the standby does not hold among them: the
// coordinator may be creating it) with protocol.ErrStandby.
func TestStandbyWritesNothing(t *testing.T) {
	const n = 20
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, n)
	reports, _, _ := c.uploadAll(n)
	e, err := c.release()
	if err != nil {
		t.Fatal(err)
	}
	released, _ := analyst.ParseReleaseID(e.Release)
	conn := c.standbyConn()
	fresh, _ := payload.NewID()
	ds := c.m.Dataset
	params, err := c.m.MechanismParams()
	if err != nil {
		t.Fatal(err)
	}
	items := []protocol.Item{{Report: reports[0].ID}}
	for _, tc := range []struct {
		name string
		req  protocol.Message
		want error // nil: answered
	}{
		{"create release", &protocol.CreateRelease{Dataset: ds, Release: fresh, Mechanism: params, Components: []payload.Component{core.Count}}, protocol.ErrStandby},
		{"create the existing release", &protocol.CreateRelease{Dataset: ds, Release: released, Mechanism: params, Components: []payload.Component{core.Count}}, protocol.ErrStandby},
		{"prepare", &protocol.Prepare{Dataset: ds}, protocol.ErrStandby},
		{"malformed prepare", &protocol.Prepare{Dataset: ds, Items: items}, protocol.ErrMalformed},
		{"decide", &protocol.Decide{Dataset: ds, Items: items}, protocol.ErrStandby},
		{"ledger check", &protocol.LedgerCheck{Dataset: ds, Charged: 9}, protocol.ErrStandby},
		{"upload", reports[0].Leader, protocol.ErrStandby},
		{"manifest digest", &protocol.ManifestDigest{}, protocol.ErrStandby},
		{"status", &protocol.StatusRequest{Dataset: ds}, nil},
		{"status of another dataset", &protocol.StatusRequest{Dataset: "other"}, server.ErrUnknownDataset},
		{"query of an unknown release", &protocol.Query{Dataset: ds, Release: fresh, Component: core.Count, Prefixes: []int{1}}, protocol.ErrStandby},
		{"query of another dataset", &protocol.Query{Dataset: "other", Release: released, Component: core.Count, Prefixes: []int{1}}, server.ErrUnknownDataset},
		{"query of the release", &protocol.Query{Dataset: ds, Release: released, Component: core.Count, Prefixes: []int{1, crashBins}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string]string{"leader": c.writes("leader"), "helper": c.writes("helper")}
			var err error
			if _, status := tc.req.(*protocol.StatusRequest); status {
				_, err = protocol.Call[*protocol.Status](ctx, conn, manifest.LeaderName, tc.req)
			} else {
				_, err = protocol.Call[*protocol.Answer](ctx, conn, manifest.LeaderName, tc.req)
			}
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("answered %v, want an answer", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("answered %v, want a refusal matching %v", err, tc.want)
			}
			for role, b := range before {
				if after := c.writes(role); after != b {
					t.Errorf("the %s's store went from %s to %s", role, b, after)
				}
			}
		})
	}
	for _, name := range []string{"leader1", "leader2", "helper1", "helper2"} {
		c.kill(name)
	}
}

// statusAt asks for the deployment's status under the analyst's key,
// of the leader process at first (the manifest's addresses if none).
func (c *processCluster) statusAt(first []ma.Multiaddr) *analyst.Status {
	c.t.Helper()
	st, err := analyst.AskStatusAt(c.ctx, c.m, c.ids["analyst"], crashTransport, first)
	if err != nil {
		c.t.Fatalf("status at %v: %v", first, err)
	}
	if len(st.Servers) != 2 {
		c.t.Fatalf("status at %v lists %d servers, want 2", first, len(st.Servers))
	}
	return st
}

// dbStatus is what st's leader part shows that the leader's database
// holds: counts, ledger, releases, rejections and processes (their IDs,
// roles and addresses).
func dbStatus(st *analyst.Status) string {
	sv := st.Servers[0]
	deref := func(p *int) string {
		if p == nil {
			return "withheld"
		}
		return strconv.Itoa(*p)
	}
	out := fmt.Sprintf("counts public %v, reports %s, held %s, spent %+v of %+v, releases %s, rejected %v, processes",
		st.CountsPublic, deref(sv.Reports), deref(sv.Held), sv.Spent, sv.Total, releasesOf(st), sv.Rejected)
	for _, p := range sv.Processes {
		out += fmt.Sprintf(" [%s coordinator %v upload %s listen %s]", p.ID, p.Coordinator, p.UploadAddr, p.Listen)
	}
	return out
}

// releasesOf lists st's leader's releases.
func releasesOf(st *analyst.Status) string {
	out := ""
	for _, r := range st.Servers[0].Releases {
		reports := "withheld"
		if r.Reports != nil {
			reports = strconv.Itoa(*r.Reports)
		}
		out += fmt.Sprintf("[%s %s %s %v ε %g δ %g created %s reports %s]", r.Release, r.Mechanism, r.Neighbours, r.Components, r.Epsilon, r.Delta, r.Created, reports)
	}
	return out
}

// standbyConn is an analyst's connection to the standby leader
// process's query address only.
func (c *processCluster) standbyConn() transport.Conn {
	c.t.Helper()
	book, err := c.m.Book(false)
	if err != nil {
		c.t.Fatal(err)
	}
	leader := book[manifest.LeaderName]
	leader.Addrs = []ma.Multiaddr{ma.StringCast(c.query["leader2"])}
	book[manifest.LeaderName] = leader
	tc := crashTransport
	tc.Key, tc.Peers = c.ids["analyst"].Key, book
	tc.MaxMessage = protocol.MaxMessageSize
	h, err := p2p.New(tc)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { h.Close() })
	return h.Conn(p2p.QueryProtocol)
}
