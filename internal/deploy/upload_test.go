package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/server"
)

// wantReports fails unless the server holds n reports.
func wantReports(t *testing.T, role string, s *Server, n int) {
	t.Helper()
	if got, err := s.NumReports(); err != nil || got != n {
		t.Fatalf("the %s holds %d reports (%v), want %d", role, got, err, n)
	}
}

// TestUploadReachesOneServer, in both upload modes: with the helper
// down, an upload is stored by the leader alone and fails, after its
// retry window, with an *client.UploadError saying so and why (connection
// refused; in relay mode, that the leader could not relay); sent again
// once the helper is back it completes there, the leader dropping the
// duplicate. With the helper down for part of a longer window, the
// party keeps retrying the helper (through the leader in relay mode)
// and the upload completes.
func TestUploadReachesOneServer(t *testing.T) {
	for _, mode := range []string{manifest.UploadDirect, manifest.UploadRelay} {
		t.Run(mode, func(t *testing.T) { uploadReachesOneServer(t, mode) })
	}
}

func uploadReachesOneServer(t *testing.T, mode string) {
	d := newDeploymentMode(t, hugeEpsilon, 1, mode)
	helperAddr := d.helper.Addrs()[0].String()
	short := fast
	short.RetryWindow, short.Backoff = 300*time.Millisecond, 10*time.Millisecond
	p, err := client.NewParty(d.m, nil, short)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := p.NewReport(instances(1, 5)[0])
	if err != nil {
		t.Fatal(err)
	}

	d.helper.Close()
	_, err = p.Send(context.Background(), r)
	var ue *client.UploadError
	if !errors.As(err, &ue) || ue.Held != client.HeldByLeader || len(ue.Failed) != 1 || ue.Failed[0].Server != manifest.HelperName {
		t.Fatalf("upload with the helper down: %v; want an *client.UploadError held by the leader only, the helper failing", err)
	}
	if !errors.Is(err, p2p.ErrConnRefused) || mode == manifest.UploadRelay && !errors.Is(err, sealed.ErrRelayFailed) {
		t.Errorf("%v: the cause is not p2p.ErrConnRefused (and, relayed, sealed.ErrRelayFailed)", err)
	}
	for _, want := range []string{r.ID.String(), "acknowledged by the leader only", "upload to the helper", "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	wantReports(t, "leader", d.leader, 1)

	d.helper = d.start(server.Helper, helperAddr)
	if dup, err := p.Send(context.Background(), r); err != nil || !dup {
		t.Fatalf("resent once the helper is back: duplicate=%v, %v; want the leader's duplicate, stored", dup, err)
	}
	wantReports(t, "helper", d.helper, 1)

	// A helper outage within the window: the upload waits it out.
	long := fast
	long.RetryWindow, long.Backoff, long.MaxBackoff = time.Minute, 10*time.Millisecond, 50*time.Millisecond
	q, err := client.NewParty(d.m, nil, long)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	r2, err := q.NewReport(instances(2, 6)[1])
	if err != nil {
		t.Fatal(err)
	}
	d.helper.Close()
	done := make(chan error, 1)
	go func() { _, err := q.Send(context.Background(), r2); done <- err }()
	for n := 1; n < 2; {
		select {
		case err := <-done:
			t.Fatalf("upload returned during the helper's outage: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if n, err = d.leader.NumReports(); err != nil {
			t.Fatal(err)
		}
	}
	d.helper = d.start(server.Helper, helperAddr)
	if err := <-done; err != nil {
		t.Fatalf("upload across the helper's outage: %v", err)
	}
	wantReports(t, "leader", d.leader, 2)
	wantReports(t, "helper", d.helper, 2)
}
