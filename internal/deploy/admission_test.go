package deploy

import (
	"context"
	"crypto/rand"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/p2p"
)

// from returns a dialer bound to the loopback address ip (127.0.0.0/8 is
// all loopback on Linux).
func from(ip string) net.Dialer {
	return net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
}

// partiesFrom has n parties bound to ip each upload one report, at
// once, and returns how many were stored at both servers and how long
// the slowest took.
func (d *deployment) partiesFrom(ip string, n int, seed uint64) (int, time.Duration) {
	d.t.Helper()
	tc := p2p.Config{Logger: quiet, RetryWindow: 30 * time.Second, Backoff: 20 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, CallTimeout: 10 * time.Second}
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i, inst := range instances(n, seed) {
		p, err := client.NewParty(d.m, nil, tc)
		if err != nil {
			d.t.Fatal(err)
		}
		p.SetDialer(from(ip))
		wg.Go(func() {
			if _, err := p.Submit(context.Background(), inst); err == nil {
				ok.Add(1)
			} else {
				d.t.Logf("party %d from %s: %v", i, ip, err)
			}
		})
	}
	wg.Wait()
	return int(ok.Load()), time.Since(start)
}

// idleSockets opens n connections from ip to addr and holds them,
// sending nothing, until the test ends; it returns how many connected.
func idleSockets(t *testing.T, ip, addr string, n int) int {
	t.Helper()
	d := from(ip)
	opened := 0
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			continue
		}
		opened++
		t.Cleanup(func() { c.Close() })
	}
	return opened
}

// garbage sends frames of random bytes from ip to addrs, one connection
// each, until stop is closed; it returns when stop is.
func garbage(ip string, addrs []string, stop <-chan struct{}) {
	d := from(ip)
	body := make([]byte, 4096)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		c, err := d.Dial("tcp", addrs[i%len(addrs)])
		if err != nil {
			continue
		}
		rand.Read(body)
		c.SetDeadline(time.Now().Add(time.Second))
		sealed.WriteFrame(c, sealed.FrameUpload, body)
		c.Read(make([]byte, 1))
		c.Close()
	}
}

// TestSealedAdmissionUnderAttack: one client holds thousands of idle
// sealed-upload connections to both servers (from 127.0.0.3) and
// another sends garbage frames as fast as it can (from 127.0.0.4),
// while 20 honest parties from 127.0.0.2 upload: all 20 are stored at
// both servers, as in the baseline run before the attack (the ratio of
// the slowest party's time to the baseline's is logged). Then, the
// attacker still holding its sockets, 5 parties from the attacker's own
// address are stored too: its burst is spent and its idle connections
// are closed to make room once a second old.
func TestSealedAdmissionUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("opens thousands of loopback connections")
	}
	lim := UploadLimits{ConnsPerAddr: 64, Rate: 16, Burst: 16, HeaderTimeout: 2 * time.Second}
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.UploadListen, c.UploadTimeout, c.UploadConns, c.UploadLimits = "127.0.0.1:0", 30*time.Second, 256, lim
	})
	d.m.Leader.UploadAddr, d.m.Helper.UploadAddr = d.leader.uploadAddr(), d.helper.uploadAddr()
	addrs := []string{d.m.Leader.UploadAddr, d.m.Helper.UploadAddr}
	const honest = 20
	base, baseTime := d.partiesFrom("127.0.0.2", honest, 1)
	if base != honest {
		t.Fatalf("baseline: %d of %d parties stored", base, honest)
	}

	idle := 0
	for _, a := range addrs {
		idle += idleSockets(t, "127.0.0.3", a, 1500)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { garbage("127.0.0.4", addrs, stop) })
	got, attackTime := d.partiesFrom("127.0.0.2", honest, 2)
	same, _ := d.partiesFrom("127.0.0.3", 5, 3)
	close(stop)
	wg.Wait()
	t.Logf("%d idle sockets opened; baseline %v, under attack %v (ratio %.2f); shed: leader %d, helper %d", idle, baseTime, attackTime,
		attackTime.Seconds()/baseTime.Seconds(), d.leader.uploads.shed.Load(), d.helper.uploads.shed.Load())
	if got != honest {
		t.Errorf("under attack %d of %d parties from another address stored, want all", got, honest)
	}
	if same != 5 {
		t.Errorf("%d of 5 parties from the attacker's address stored, want all", same)
	}
	if c := d.counts(); c != [2]int{2*honest + 5, 2*honest + 5} {
		t.Errorf("stored %v reports, want %d at each server", c, 2*honest+5)
	}
}

// TestClientAddr: the admission unit is the IPv4 address, or the IPv6
// /56 (an IPv4-mapped IPv6 address is its IPv4 address).
func TestClientAddr(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"10.1.2.3:4000", "10.1.2.3/32"},
		{"[2001:db8:aa:bbcc::1]:4000", "2001:db8:aa:bb00::/56"},
		{"[::ffff:10.1.2.3]:4000", "10.1.2.3/32"},
	} {
		a, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := clientAddr(a); got != netip.MustParsePrefix(c.want) {
			t.Errorf("clientAddr(%s) = %v, want %s", c.addr, got, c.want)
		}
	}
}

// TestAnalystAnswersUnderIdleFlood: item 3 of the admission work at the
// user level. A flood of idle TCP connections from the analyst's own
// address to the leader's libp2p port, many times the leader's
// handshake limits (set small here, 16 per address and 32 in all, so
// that a few hundred sockets exceed them), does not keep the analyst
// from fedecdf status and a query: the leader closes an idle connection
// a second old to make room for the analyst's (p2p's handshakes), which
// retries within its window as the CLI does.
func TestAnalystAnswersUnderIdleFlood(t *testing.T) {
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(cfg *ServerConfig) {
		cfg.Transport.Limits = p2p.Limits{ConnsPerAddr: 16, Conns: 32}
	})
	inst := instances(3, 9)
	p := d.newParty()
	for _, in := range inst {
		if _, err := p.Submit(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	port, err := d.leader.Addrs()[0].ValueForProtocol(ma.P_TCP)
	if err != nil {
		t.Fatal(err)
	}
	idle := idleSockets(t, "127.0.0.1", "127.0.0.1:"+port, 300)
	if idle < 33 {
		t.Fatalf("only %d idle connections opened: the flood does not exceed the limits", idle)
	}
	tc := p2p.Config{Logger: quiet, RetryWindow: 10 * time.Second, Backoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, CallTimeout: 10 * time.Second}
	start := time.Now()
	st, err := analyst.AskStatus(context.Background(), d.m, d.analystID, tc)
	if err != nil {
		t.Fatalf("status behind %d idle connections from the analyst's address: %v", idle, err)
	}
	if !st.LeaderReachesHelper {
		t.Errorf("status behind the flood: the leader does not reach the helper: %+v", st)
	}
	a, err := analyst.NewAnalyst(d.m, d.analystID, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	e, err := a.ECDF(context.Background())
	if err != nil {
		t.Fatalf("query behind %d idle connections from the analyst's address: %v", idle, err)
	}
	checkExact(t, e, plainCounts(t, d.m, inst))
	t.Logf("status and query behind %d idle connections: %v", idle, time.Since(start).Round(time.Millisecond))
}
