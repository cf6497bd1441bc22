package p2p

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/transport"
)

// fakeConn is an inbound connection as the gater sees it.
type fakeConn struct {
	local, remote ma.Multiaddr
	closed        bool
}

func (c *fakeConn) LocalMultiaddr() ma.Multiaddr  { return c.local }
func (c *fakeConn) RemoteMultiaddr() ma.Multiaddr { return c.remote }
func (c *fakeConn) Close() error                  { c.closed = true; return nil }

func inbound(ip string, port int) *fakeConn {
	return &fakeConn{local: ma.StringCast("/ip4/10.0.0.1/tcp/4001"), remote: ma.StringCast(fmt.Sprintf("/ip4/%s/tcp/%d", ip, port))}
}

// TestHandshakesPerAddress: an address full of connections in their
// handshake refuses a new one while they are younger than the grace,
// then closes the oldest to make room; a secured connection frees its
// place at once, another address and an IPv6 /56 are counted apart, the
// whole host is capped too, and a handshake the upgrader gave up on is
// forgotten.
func TestHandshakesPerAddress(t *testing.T) {
	clock := time.Unix(0, 0)
	h := newHandshakes(Limits{ConnsPerAddr: 2, Conns: 4})
	h.now = func() time.Time { return clock }
	a1, a2 := inbound("10.9.0.1", 1), inbound("10.9.0.1", 2)
	for _, c := range []*fakeConn{a1, a2} {
		if !h.accept(c) {
			t.Fatal("refused a connection below the cap")
		}
	}
	a3 := inbound("10.9.0.1", 3)
	if h.accept(a3) {
		t.Fatal("accepted a third connection while the two are young")
	}
	clock = clock.Add(handshakeGrace)
	if !h.accept(a3) || !a1.closed || a2.closed {
		t.Fatalf("once a second old: accepted=%v, oldest closed=%v, next closed=%v; want the oldest closed for the new one", !a3.closed, a1.closed, a2.closed)
	}
	h.secured(a2)
	if a4 := inbound("10.9.0.1", 4); !h.accept(a4) || a3.closed {
		t.Fatal("a secured connection still holds its place")
	}
	b := inbound("10.9.0.2", 1)
	v6a := &fakeConn{local: a1.local, remote: ma.StringCast("/ip6/2001:db8:0:1::1/tcp/1")}
	v6b := &fakeConn{local: a1.local, remote: ma.StringCast("/ip6/2001:db8:0:2::1/tcp/1")} // the same /56
	if !h.accept(b) || !h.accept(v6a) {
		t.Fatal("other addresses refused below the host's cap")
	}
	if h.numWaiting() != 4 {
		t.Fatalf("%d waiting, want 4", h.numWaiting())
	}
	if h.accept(v6b) {
		t.Fatal("accepted a fifth connection while the host is full of young ones")
	}
	clock = clock.Add(handshakeExpiry)
	if !h.accept(v6b) || h.numWaiting() != 1 {
		t.Fatalf("after the upgrader's timeout %d still waiting, want only the new one", h.numWaiting())
	}
}

// TestStrangersCannotLockOutAnAnalyst: 600 idle TCP connections from
// the analyst's own address (loopback, whose per-address limits are off,
// so the host-wide cap binds) do not keep the analyst out: its call
// succeeds within its retry window, the idle connections closing to make
// room once a second old. (Before, they held every place for the
// upgrader's 15 s, and again as they were reopened.)
func TestStrangersCannotLockOutAnAnalyst(t *testing.T) {
	analystKey := newKey(t)
	analystID, _ := peer.IDFromPrivateKey(analystKey)
	srv, err := New(Config{Key: newKey(t), Self: "leader", Listen: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")},
		Peers: map[transport.PeerID]peer.AddrInfo{"analyst": {ID: analystID}}, Logger: quiet, Limits: Limits{ConnsPerAddr: 16, Conns: 32}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Handle(QueryProtocol, []transport.PeerID{"analyst"}, echo)
	port, err := srv.Addrs()[0].ValueForProtocol(ma.P_TCP)
	if err != nil {
		t.Fatal(err)
	}
	idle := 0
	for range 600 {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			continue
		}
		idle++
		defer c.Close()
	}
	a, err := New(Config{Key: analystKey, Peers: map[transport.PeerID]peer.AddrInfo{"leader": {ID: srv.ID(), Addrs: srv.Addrs()}},
		Logger: quiet, RetryWindow: 10 * time.Second, Backoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	resp, err := a.Conn(QueryProtocol).Call(context.Background(), "leader", []byte("status"))
	if err != nil || !strings.HasSuffix(string(resp), ":status") {
		t.Fatalf("the analyst's call behind %d idle connections: %q, %v", idle, resp, err)
	}
}
