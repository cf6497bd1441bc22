package deploy

import (
	"context"
	"testing"

	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
)

// TestReportAtLeaderOnlyFoldedOutFromStore: a report only the leader
// holds is folded into its aggregate on upload; the release leaves it
// out, so the leader subtracts it again from its key read back from its
// bbolt store, and its counts are the plain ones at ε = 2^48 — also when
// both servers restart and rebuild their aggregates from their stores
// before the release is read again.
func TestReportAtLeaderOnlyFoldedOutFromStore(t *testing.T) {
	const n = 6
	d := newDeployment(t, hugeEpsilon, n)
	inst := instances(n, 3)
	p := d.newParty()
	for _, x := range inst {
		if _, err := p.Submit(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	g, err := d.m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	extra, err := party.New(party.Instance{Score: 0.05, Label: 1}, g)
	if err != nil {
		t.Fatal(err)
	}
	leaderKey, _, err := extra.DCFKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	up := &protocol.Upload{Dataset: d.m.Dataset, Report: extra.ReportID(), Key: leaderKey}
	if _, err := protocol.Call[*protocol.Ack](context.Background(), p.host.Conn(p2p.ReportProtocol), LeaderName, up); err != nil {
		t.Fatal(err)
	}
	want := plainCounts(t, d.m, inst)
	first := d.query()
	checkExact(t, first, want)

	id, err := ParseReleaseID(first.Stored.Release)
	if err != nil {
		t.Fatal(err)
	}
	d.restartBoth()
	again, err := d.readRelease(id)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, again, want)
}
