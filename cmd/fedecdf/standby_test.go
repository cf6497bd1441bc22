package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
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
