package deploy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// stallingListener accepts connections and never answers, until the
// test ends; it returns its address.
func stallingListener(t *testing.T) string {
	t.Helper()
	ln := stallAt(t, "127.0.0.1:0", new(atomic.Int64))
	return ln
}

// stallAt listens at addr, accepts connections and never answers,
// counting them in accepted, until the test ends; it returns its address.
func stallAt(t *testing.T, addr string, accepted *atomic.Int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	go func() {
		defer close(done)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			held = append(held, c) // read nothing, answer nothing
		}
	}()
	return ln.Addr().String()
}

// TestUploadToStallingServerEndsWithinWindow: a helper that accepts the
// connection and never answers (a stopped process, a black hole behind
// a proxy) makes a party with retry window W and attempt timeout T give
// up within W + T, over the sealed transport and over libp2p alike,
// having retried the attempts that timed out. The bound checked is
// W + T with generous slack for a loaded machine (the call's own
// timeout, 5 minutes before, would exceed it).
func TestUploadToStallingServerEndsWithinWindow(t *testing.T) {
	const window, attempt = time.Second, 300 * time.Millisecond
	d := newSealedDeployment(t, manifest.UploadDirect, time.Minute)
	stall := stallingListener(t)
	host, port, _ := net.SplitHostPort(stall)
	for _, c := range []struct {
		name string
		edit func(*manifest.Manifest)
	}{
		{"sealed", func(m *manifest.Manifest) { m.Helper.UploadAddr = stall }},
		{"libp2p", func(m *manifest.Manifest) {
			m.Leader.UploadAddr, m.Helper.UploadAddr = "", ""
			m.Helper.Addrs = []string{fmt.Sprintf("/ip4/%s/tcp/%s", host, port)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := *d.m
			c.edit(&m)
			p, err := client.NewParty(&m, nil, p2p.Config{Logger: quiet, RetryWindow: window, CallTimeout: attempt, Backoff: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			start := time.Now()
			_, err = p.Submit(context.Background(), instances(1, 21)[0])
			took := time.Since(start)
			if err == nil {
				t.Fatal("an upload to a server that never answers succeeded")
			}
			if !strings.Contains(err.Error(), "gave up after") || strings.Contains(err.Error(), "after 1 attempts") {
				t.Errorf("the timed-out attempts were not retried: %v", err)
			}
			if bound := 10 * (window + attempt); took > bound {
				t.Errorf("gave up after %v, beyond %v (10× window + attempt)", took, bound)
			}
			t.Logf("gave up after %v (window %v, attempt %v): %v", took, window, attempt, err)
		})
	}
}

// TestPartyAttemptTimeoutDefault: a party given no CallTimeout bounds
// each upload attempt by DefaultUploadAttempt, not the 5-minute call
// timeout of libp2p's queries.
func TestPartyAttemptTimeoutDefault(t *testing.T) {
	d := newSealedDeployment(t, manifest.UploadDirect, time.Minute)
	p, err := client.NewParty(d.m, nil, p2p.Config{RetryWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if p.Transport().CallTimeout != client.DefaultUploadAttempt || client.DefaultUploadAttempt >= p2p.DefaultCallTimeout {
		t.Errorf("a party's attempt timeout is %v, want %v (below the call timeout %v)", p.Transport().CallTimeout, client.DefaultUploadAttempt, p2p.DefaultCallTimeout)
	}
}

// TestRogueAnalystToldNothingWasCreated: a key that edited itself into
// its own copy of the manifest as an analyst is refused by the leader
// before its request is read, and told that nothing was created or
// charged, not that the leader may have created the release.
func TestRogueAnalystToldNothingWasCreated(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	rogue := newIdentity(t)
	m := *d.m
	m.Analysts = append([]string{rogue.PeerID.String()}, d.m.Analysts...)
	a, err := analyst.NewAnalyst(&m, rogue, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.ECDF(context.Background())
	if !errors.Is(err, transport.ErrNotDelivered) || !strings.Contains(err.Error(), "nothing was created or charged") || strings.Contains(err.Error(), "may have created") {
		t.Fatalf("a rogue analyst's release: %v, want %v saying nothing was created", err, transport.ErrNotDelivered)
	}
	if spent, _ := d.leader.store.Spent(d.m.Dataset); spent.Epsilon != 0 {
		t.Errorf("the leader spent ε=%g on the rogue analyst's request", spent.Epsilon)
	}
}

// TestQueryAgainstStoppedHelperFailsAtOnce: when the helper's address
// accepts connections and never answers (a stopped process, SIGSTOP, a
// black hole), the analyst's query fails after one connect timeout of
// the leader, not after the leader's three attempts, and says that the
// helper is not answering. The attempts are counted at the stalling
// listener that replaced the helper.
func TestQueryAgainstStoppedHelperFailsAtOnce(t *testing.T) {
	const connect = 300 * time.Millisecond
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(cfg *ServerConfig) {
		cfg.Transport.ConnectTimeout = connect
		cfg.PeerCheck = time.Hour // no check of the leader's own dials the helper
	})
	p := d.newParty()
	if _, err := p.Submit(context.Background(), instances(1, 5)[0]); err != nil {
		t.Fatal(err)
	}
	addr, err := d.helper.Addrs()[0].ValueForProtocol(ma.P_TCP)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.helper.Close(); err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	stallAt(t, "127.0.0.1:"+addr, &dials)
	start := time.Now()
	_, err = d.analyst().ECDF(context.Background())
	took := time.Since(start)
	if err == nil {
		t.Fatal("a query answered without the helper")
	}
	t.Logf("failed after %v, %d connection(s) to the helper: %v", took.Round(time.Millisecond), dials.Load(), err)
	if msg := err.Error(); !strings.Contains(msg, "helper is not answering") || !strings.Contains(msg, "stopped") {
		t.Errorf("the error %q does not say the helper is not answering", msg)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the leader opened %d connections to the stopped helper, want 1 (no retry after a connect timeout)", n)
	}
}
