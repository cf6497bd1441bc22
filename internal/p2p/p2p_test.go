package p2p

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/transport"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newKey(t testing.TB) crypto.PrivKey {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newServer starts a host listening on a free loopback port.
func newServer(t testing.TB, self transport.PeerID, peers map[transport.PeerID]peer.AddrInfo) *Host {
	t.Helper()
	h, err := New(Config{Key: newKey(t), Self: self, Listen: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")},
		Peers: peers, Logger: quiet, Attempts: 3, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// newClient starts a dial-only host that knows server as name.
func newClient(t testing.TB, key crypto.PrivKey, name transport.PeerID, server *Host) *Host {
	t.Helper()
	h, err := New(Config{Key: key, Peers: map[transport.PeerID]peer.AddrInfo{name: {ID: server.ID(), Addrs: server.Addrs()}},
		Logger: quiet, Attempts: 3, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func echo(_ context.Context, from transport.PeerID, req []byte) []byte {
	return append([]byte(string(from)+":"), req...)
}

func TestCallAndPinning(t *testing.T) {
	analystKey := newKey(t)
	analystID, _ := peer.IDFromPrivateKey(analystKey)
	srv := newServer(t, "leader", map[transport.PeerID]peer.AddrInfo{"analyst": {ID: analystID}})
	srv.Handle(ReportProtocol, nil, echo)
	srv.Handle(QueryProtocol, []transport.PeerID{"analyst"}, echo)

	analyst := newClient(t, analystKey, "leader", srv)
	resp, err := analyst.Conn(QueryProtocol).Call(context.Background(), "leader", []byte("q"))
	if err != nil || string(resp) != "analyst:q" {
		t.Fatalf("analyst query: %q, %v; want \"analyst:q\"", resp, err)
	}

	stranger := newClient(t, newKey(t), "leader", srv)
	_, err = stranger.Conn(QueryProtocol).Call(context.Background(), "leader", []byte("q"))
	if !IsRefused(err) {
		t.Fatalf("query from an unknown peer: err = %v, want a refusal", err)
	}
	resp, err = stranger.Conn(ReportProtocol).Call(context.Background(), "leader", []byte("r"))
	if want := stranger.ID().String() + ":r"; err != nil || string(resp) != want {
		t.Fatalf("report from an unknown peer: %q, %v; want %q", resp, err, want)
	}
	if _, err := stranger.Conn(ReportProtocol).Call(context.Background(), "helper", nil); err == nil {
		t.Fatal("call to a peer outside the address book succeeded")
	}
}

// TestRetryAfterLostResponse drops the response of the first delivery:
// Call must deliver the request again and return the second response.
func TestRetryAfterLostResponse(t *testing.T) {
	srv := newServer(t, "leader", nil)
	var deliveries atomic.Int32
	srv.h.SetStreamHandler(ReportProtocol, func(s network.Stream) {
		_, req, err := readFrame(s, DefaultMaxMessage)
		if err != nil {
			s.Reset()
			return
		}
		if deliveries.Add(1) == 1 {
			s.Reset() // processed, but the acknowledgement is lost
			return
		}
		writeFrame(s, frameMessage, req, DefaultMaxMessage)
		s.Close()
	})
	c := newClient(t, newKey(t), "leader", srv)
	resp, err := c.Conn(ReportProtocol).Call(context.Background(), "leader", []byte("report"))
	if err != nil || string(resp) != "report" {
		t.Fatalf("Call = %q, %v", resp, err)
	}
	if n := deliveries.Load(); n != 2 {
		t.Fatalf("%d deliveries, want 2", n)
	}
}

func TestCallGivesUpAfterAttempts(t *testing.T) {
	srv := newServer(t, "leader", nil)
	var deliveries atomic.Int32
	srv.h.SetStreamHandler(ReportProtocol, func(s network.Stream) {
		deliveries.Add(1)
		s.Reset()
	})
	c := newClient(t, newKey(t), "leader", srv)
	if _, err := c.Conn(ReportProtocol).Call(context.Background(), "leader", []byte("x")); err == nil {
		t.Fatal("Call succeeded against a peer that always resets")
	}
	if n := deliveries.Load(); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
}

func TestOversizeMessageRefused(t *testing.T) {
	srv := newServer(t, "leader", nil)
	srv.Handle(ReportProtocol, nil, echo)
	c, err := New(Config{Key: newKey(t), Peers: map[transport.PeerID]peer.AddrInfo{"leader": {ID: srv.ID(), Addrs: srv.Addrs()}},
		Logger: quiet, MaxMessage: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Conn(ReportProtocol).Call(context.Background(), "leader", make([]byte, 17)); err == nil {
		t.Fatal("a 17-byte request passed a 16-byte cap")
	}
}

func TestFrameErrors(t *testing.T) {
	var good bytes.Buffer
	if err := writeFrame(&good, frameMessage, []byte("hello"), 100); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		b   []byte
		max int
	}{
		"empty":        {nil, 100},
		"short header": {good.Bytes()[:3], 100},
		"truncated":    {good.Bytes()[:good.Len()-1], 100},
		"over the cap": {good.Bytes(), 4},
		"version 2":    {append([]byte{2}, good.Bytes()[1:]...), 100},
		"kind 7":       {append([]byte{1, 7}, good.Bytes()[2:]...), 100},
		"long refusal": {append([]byte{1, 1, 0, 0, 8, 0}, make([]byte, 2048)...), 1 << 20},
	} {
		if _, _, err := readFrame(bytes.NewReader(tc.b), tc.max); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	kind, p, err := readFrame(bytes.NewReader(good.Bytes()), 5)
	if err != nil || kind != frameMessage || string(p) != "hello" {
		t.Fatalf("readFrame = %d, %q, %v", kind, p, err)
	}
}

// FuzzReadFrame: the stream framing decoder never panics, never returns
// more than the cap, and re-encodes what it accepts to the bytes it read.
func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	writeFrame(&b, frameMessage, []byte("request"), 1<<10)
	f.Add(b.Bytes())
	f.Add([]byte{1, 1, 0, 0, 0, 3, 'n', 'o', '!'})
	f.Add([]byte{1, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 1 << 10
		r := bytes.NewReader(in)
		kind, p, err := readFrame(r, max)
		if err != nil {
			return
		}
		if len(p) > max {
			t.Fatalf("payload of %d bytes over the cap %d", len(p), max)
		}
		var out bytes.Buffer
		if err := writeFrame(&out, kind, p, max); err != nil {
			t.Fatal(err)
		}
		if consumed := len(in) - r.Len(); !bytes.Equal(out.Bytes(), in[:consumed]) {
			t.Fatalf("re-encoding %x gives %x", in[:consumed], out.Bytes())
		}
	})
}

func TestCallHonoursContext(t *testing.T) {
	srv := newServer(t, "leader", nil)
	release := make(chan struct{})
	srv.Handle(ReportProtocol, nil, func(ctx context.Context, _ transport.PeerID, req []byte) []byte {
		<-release
		return req
	})
	defer close(release)
	c := newClient(t, newKey(t), "leader", srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Conn(ReportProtocol).Call(ctx, "leader", []byte("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with a cancelled context: %v", err)
	}
}

// TestOccupiedPortRefused: a second host on the address of a running one
// fails with ErrAddrInUse naming the address, instead of sharing the
// port through SO_REUSEPORT.
func TestOccupiedPortRefused(t *testing.T) {
	first := newServer(t, "leader", nil)
	var addr ma.Multiaddr
	for _, a := range first.Addrs() {
		if _, err := a.ValueForProtocol(ma.P_TCP); err == nil {
			addr = a
		}
	}
	if addr == nil {
		t.Fatalf("no TCP address among %v", first.Addrs())
	}
	second, err := New(Config{Key: newKey(t), Self: "leader", Listen: []ma.Multiaddr{addr}, Logger: quiet})
	if err == nil {
		second.Close()
		t.Fatalf("second host on %s started", addr)
	}
	if !errors.Is(err, ErrAddrInUse) || !strings.Contains(err.Error(), addr.String()) {
		t.Fatalf("second host on %s: %v; want ErrAddrInUse naming the address", addr, err)
	}
}

// freeAddr returns a loopback TCP address where nothing listens.
func freeAddr(t *testing.T) ma.Multiaddr {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return ma.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port))
}

// TestDialErrorsSayWhy: a call to an address where nothing listens, or
// where a host with another key listens, fails with a *DialError naming
// the peer, the address and the cause on every attempt, never libp2p's
// "dial backoff".
func TestDialErrorsSayWhy(t *testing.T) {
	expected, _ := peer.IDFromPrivateKey(newKey(t))
	srv := newServer(t, "leader", nil)
	srv.Handle(ReportProtocol, nil, echo)
	for _, tc := range []struct {
		name  string
		addrs []ma.Multiaddr
		cause error
		says  []string
	}{
		{"nothing listens", []ma.Multiaddr{freeAddr(t)}, ErrConnRefused,
			[]string{"connection refused", "fedecdf server --role leader"}},
		{"another key", srv.Addrs(), ErrPeerMismatch,
			[]string{"not the expected one", "manifest's leader key", expected.String(), srv.ID().String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{Key: newKey(t), Peers: map[transport.PeerID]peer.AddrInfo{"leader": {ID: expected, Addrs: tc.addrs}},
				Logger: quiet, Attempts: 3, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Conn(ReportProtocol).Call(context.Background(), "leader", []byte("x"))
			var de *DialError
			if !errors.As(err, &de) || !errors.Is(err, tc.cause) {
				t.Fatalf("Call: %v; want a *DialError caused by %q", err, tc.cause)
			}
			msg := err.Error()
			if de.Peer != "leader" || !slices.ContainsFunc(tc.addrs, func(a ma.Multiaddr) bool { return a.String() == de.Addr }) {
				t.Errorf("DialError names %s at %s; want leader at one of %v", de.Peer, de.Addr, tc.addrs)
			}
			for _, want := range append([]string{"leader at " + de.Addr}, tc.says...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "backoff") {
				t.Errorf("error %q still says backoff", msg)
			}
		})
	}
}
