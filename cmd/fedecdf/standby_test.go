package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// TestStandbyRefusesMalformedUploads: a standby process refuses at
// upload, as the coordinating process does, a report whose share does
// not decode, with a refusal matching verify.ErrMalformed (the party
// learns of it at once), and records nothing of it; an honest report
// sent to the standby is acknowledged and stored.
func TestStandbyRefusesMalformedUploads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, 1)
	p := c.party()
	reports, _ := c.newReports(p, 3)
	for k, name := range []string{"leader1", "leader2"} {
		t.Run(name, func(t *testing.T) {
			up := *reports[k].Leader
			up.Share = up.Share[:len(up.Share)/2]
			e := c.m.Leader
			e.UploadAddr, e.MoreUploadAddrs = c.upload[name], nil
			call, err := client.NewSealedCall(rand.Reader, e, manifest.LeaderName, sealed.FrameUpload, up.Report, up.Dataset, protocol.Encode(&up))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.CallSealed(ctx, call)
			var refused *protocol.RemoteError
			if !errors.As(err, &refused) || !errors.Is(err, verify.ErrMalformed) {
				t.Fatalf("a truncated share sent to %s: %v, want an authenticated refusal matching %v", name, err, verify.ErrMalformed)
			}
			if n := queryInt(t, c.stores["leader"], fmt.Sprintf(`SELECT count(*) FROM fedecdf_reports WHERE id = '\x%x'`, up.Report[:])); n != 0 {
				t.Errorf("%s recorded the malformed report (%d rows)", name, n)
			}
		})
	}
	honest := c.partyOf(2)
	if _, err := honest.Send(ctx, reports[2]); err != nil {
		t.Fatalf("an honest report through the standbys: %v", err)
	}
	if n := queryInt(t, c.stores["leader"], fmt.Sprintf(`SELECT count(*) FROM fedecdf_reports WHERE id = '\x%x'`, reports[2].ID[:])); n != 1 {
		t.Errorf("the honest report is recorded %d times at the leader, want 1", n)
	}
}

// TestStandbyRelays: in a relay deployment with two processes per
// role, the standby leader takes relayed reports, records its share and
// relays the helper's to the helper's coordinator, acknowledging once
// both hold it; a release counts the reports sent through the standby
// only. Then the coordinating leader is SIGKILLed while parties upload
// through both leader processes: none is lost, and a release through
// the leader that took over counts each acknowledged report once.
func TestStandbyRelays(t *testing.T) {
	const first, n, killAfter = 20, 100, 30
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newProcessCluster(t, ctx, first, "--upload", "relay")
	p := c.party()
	reports, bins := c.newReports(p, n)
	viaStandby := newUploads()
	viaStandby.tries = 1
	viaStandby.send(ctx, []*client.Party{c.partyOf(2)}, reports[:first], nil)
	if viaStandby.failed != 0 {
		t.Fatalf("%d of %d relayed uploads through the standby leader failed: %v", viaStandby.failed, first, viaStandby.err)
	}
	e, err := c.release()
	if err != nil {
		t.Fatalf("release over the reports relayed by the standby: %v", err)
	}
	if want := prefixCounts(viaStandby.acked, bins); e.N != first || !slices.Equal(e.Counts, want) {
		t.Fatalf("release over the reports relayed by the standby: %d reports, counts %v; want %d, %v", e.N, e.Counts, first, want)
	}
	up := newUploads()
	up.tries = 1
	killed := make(chan struct{})
	up.send(ctx, []*client.Party{p}, reports[first:], func(acked int) {
		if acked == killAfter {
			c.kill("leader1")
			close(killed)
		}
	})
	<-killed
	if up.failed != 0 {
		t.Errorf("%d of %d relayed uploads failed at both leader processes: %v", up.failed, n-first, up.err)
	}
	c.waitLog("leader2", c.procs["leader2"], func(log string) bool { return strings.Contains(log, "msg=serving") })
	e, err = c.release()
	if err != nil {
		t.Fatalf("release through the leader process that took over: %v", err)
	}
	for _, name := range []string{"leader2", "helper1", "helper2"} {
		c.kill(name)
	}
	for id := range viaStandby.acked {
		up.acked[id] = true
	}
	atBoth := c.checkStored(up.acked, e, bins)
	t.Logf("%d acknowledged of %d, %d stored at both servers, released %d; the coordinating leader was killed after %d", len(up.acked), n, len(atBoth), e.N, killAfter)
}
