package deploy

import (
	"context"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
)

// TestReportAtLeaderOnlyLeftOutAcrossRestart: a verified report only the
// leader holds is never counted: its verification finds the helper
// lacking it and leaves it undecided, so the release sums the other
// reports alone and its counts are the plain ones at ε = 2^48 — also
// when both servers restart and rebuild their state from their stores
// (the leader still holds the report, undecided) before the release is
// read again and a new one is made. Once the helper gets its share, the
// report is verified and counted.
func TestReportAtLeaderOnlyLeftOutAcrossRestart(t *testing.T) {
	const n = 6
	d := newDeployment(t, hugeEpsilon, n)
	inst := instances(n+1, 3)
	p := d.newParty()
	for _, x := range inst[:n] {
		if _, err := p.Submit(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	extra, err := p.NewReport(inst[n])
	if err != nil {
		t.Fatal(err)
	}
	if err := upload(p, manifest.LeaderName, extra.Leader); err != nil {
		t.Fatal(err)
	}
	want := plainCounts(t, d.m, inst[:n])
	first := d.query()
	checkExact(t, first, want)

	id, err := analyst.ParseReleaseID(first.Stored.Release)
	if err != nil {
		t.Fatal(err)
	}
	d.restartBoth()
	again, err := d.readRelease(id)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, again, want)
	if got := countsOf(t, d.status())["leader"]; got != (serverCounts{n, 1, 1}) {
		t.Errorf("the restarted leader (counted, held, one server only) %v, want {%d 1 1}", got, n)
	}
	checkExact(t, d.query(), want)

	if dup, err := p.Send(context.Background(), extra); err != nil || !dup {
		t.Fatalf("resending the report: duplicate %v, %v", dup, err)
	}
	checkExact(t, d.query(), plainCounts(t, d.m, inst))
}
