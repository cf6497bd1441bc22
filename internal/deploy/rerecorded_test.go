package deploy

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// waitPG polls the count sql returns on the database of dsn until it is
// want, failing after 30 s.
func waitPG(t *testing.T, dsn, sql string, want int64) {
	t.Helper()
	var n int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pgtest.QueryRow(t, dsn, sql, &n); n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d after 30 s, want %d", sql, n, want)
		}
	}
}

// TestPurgedReportRecordedAgainOnPostgres is the adversary of
// verification prepared by the processes of a role (PostgreSQL): a
// party's report reaches the leader only, which prepares it (its sketch
// and a fold holding its prefix vector) and purges it as held by one
// server only; the report is then uploaded again, to both, under the
// same ID with another bin. A release counts exactly the reports both
// servers finally hold, the new bin and not the old — what one process
// per role, verifying without preparation, releases.
func TestPurgedReportRecordedAgainOnPostgres(t *testing.T) {
	d, dsns := newPostgresDeployment(t, func(c *ServerConfig) {
		if c.Role == server.Leader {
			c.PurgeAfter = time.Nanosecond
		}
	})
	leaderDB := dsns[server.Leader]
	inst := instances(3, 27)
	p := d.newParty()
	for _, x := range inst {
		if _, err := p.Submit(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	var id payload.ReportID
	id[0], id[15] = 0x27, 0xdd
	keys := func(x party.Instance) party.Report { return d.verifiedKeysAt(id, x) }
	first, again := party.Instance{Score: 0.05, Label: 1}, party.Instance{Score: 0.95, Label: 0}
	r := keys(first)
	if err := upload(p, manifest.LeaderName, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: r.Shares[0]}); err != nil {
		t.Fatal(err)
	}
	prepared := fmt.Sprintf(`SELECT count(*) FROM fedecdf_prepared WHERE id = '\x%x' AND fold IS NOT NULL`, id[:])
	waitPG(t, leaderDB, prepared, 1)
	d.status() // the comparison that purges the leader's own report
	if n, err := d.leader.NumReports(); err != nil || n != len(inst) {
		t.Fatalf("the leader holds %d reports (%v) after the purge, want %d", n, err, len(inst))
	}
	r = keys(again)
	for k, to := range []transport.PeerID{manifest.LeaderName, manifest.HelperName} {
		if err := upload(p, to, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: r.Shares[k]}); err != nil {
			t.Fatalf("uploading the report again to the %s: %v", to, err)
		}
	}
	checkExact(t, d.query(), plainCounts(t, d.m, append(inst, again)))
}

// verifiedKeysAt is a party's verified report of x under the report ID
// id, for an upload built by hand.
func (d *deployment) verifiedKeysAt(id payload.ReportID, x party.Instance) party.Report {
	d.t.Helper()
	return d.verifiedKeysFrom(id, x, nil)
}

// verifiedKeysFrom is verifiedKeysAt with its randomness drawn from rnd
// (crypto/rand if nil).
func (d *deployment) verifiedKeysFrom(id payload.ReportID, x party.Instance, rnd io.Reader) party.Report {
	d.t.Helper()
	g, err := d.m.NewGrid()
	if err != nil {
		d.t.Fatal(err)
	}
	pt, err := party.New(x, g)
	if err != nil {
		d.t.Fatal(err)
	}
	r, err := pt.VerifiedKeysAt(id, true, rnd)
	if err != nil {
		d.t.Fatal(err)
	}
	return r
}
