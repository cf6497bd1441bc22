package deploy

import (
	"context"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/party"
)

// TestRelayUpload: in relay mode parties reach the leader only (their
// copy of the manifest gives the helper an address nobody listens on),
// yet both servers hold every report: at ε = 2^48 the counts are exact.
// A resent report is a duplicate at both servers.
func TestRelayUpload(t *testing.T) {
	const n = 25
	d := newDeploymentMode(t, hugeEpsilon, n, manifest.UploadRelay)
	partyView := *d.m
	partyView.Helper.Addrs = []string{"/ip4/127.0.0.1/tcp/1"}
	p, err := client.NewParty(&partyView, nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	inst := instances(n, 5)
	sendThenResend(t, p, inst)
	for _, s := range []*Server{d.leader, d.helper} {
		if got, err := s.NumReports(); got != n || err != nil {
			t.Fatalf("the %s stored %d reports (%v), want %d", s.cfg.Role, got, err, n)
		}
	}
	checkExact(t, d.query(), plainCounts(t, d.m, inst))
}

// sendThenResend has p send the report of each instance, each new to
// the servers, then the first one again, which must be a duplicate.
func sendThenResend(t *testing.T, p *client.Party, inst []party.Instance) {
	t.Helper()
	var first *client.Report
	for _, x := range inst {
		r, err := p.NewReport(x)
		if err != nil {
			t.Fatal(err)
		}
		if dup, err := p.Send(context.Background(), r); err != nil || dup {
			t.Fatalf("upload: duplicate=%v, %v", dup, err)
		}
		if first == nil {
			first = r
		}
	}
	if dup, err := p.Send(context.Background(), first); err != nil || !dup {
		t.Fatalf("resending a report: duplicate=%v, %v", dup, err)
	}
}

// TestRelayRefusedInDirectMode: a direct deployment does not serve the
// relay protocol.
func TestRelayRefusedInDirectMode(t *testing.T) {
	d := newDeployment(t, 1, 1)
	relayView := *d.m
	relayView.Upload = manifest.UploadRelay
	p, err := client.NewParty(&relayView, nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Submit(context.Background(), instances(1, 6)[0]); err == nil {
		t.Fatal("a direct-mode leader accepted a relayed report")
	}
}
