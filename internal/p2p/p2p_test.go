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
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
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

// rawListener accepts TCP connections on a free loopback port and
// hands each to serve; it stops when the test ends.
func rawListener(t *testing.T, serve func(*net.TCPConn)) ma.Multiaddr {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c.(*net.TCPConn))
		}
	}()
	return ma.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", l.Addr().(*net.TCPAddr).Port))
}

// TestDialCauses: a server that closes the connection during the
// handshake (as a server over its per-address limits does) and one
// that never answers fail with ErrConnReset and ErrDialTimeout, and a
// handler that resets the stream with ErrConnReset, each naming the
// peer and never saying "dial backoff".
func TestDialCauses(t *testing.T) {
	expected, _ := peer.IDFromPrivateKey(newKey(t))
	resetter := rawListener(t, func(c *net.TCPConn) {
		c.SetLinger(0) // close with RST, as after unread handshake bytes
		c.Close()
	})
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	silent := rawListener(t, func(c *net.TCPConn) {
		<-hold
		c.Close()
	})
	resets := newServer(t, "leader", nil)
	resets.h.SetStreamHandler(ReportProtocol, func(s network.Stream) { s.Reset() })
	for _, tc := range []struct {
		name  string
		id    peer.ID
		addrs []ma.Multiaddr
		cause error
		says  string
	}{
		{"closed during the handshake", expected, []ma.Multiaddr{resetter}, ErrConnReset, "--conns-per-address"},
		{"never answers", expected, []ma.Multiaddr{silent}, ErrDialTimeout, "may be stopped or overloaded"},
		{"stream reset", resets.ID(), resets.Addrs(), ErrConnReset, "reset by the peer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{Key: newKey(t), Peers: map[transport.PeerID]peer.AddrInfo{"leader": {ID: tc.id, Addrs: tc.addrs}},
				Logger: quiet, Attempts: 2, Backoff: time.Millisecond, CallTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Conn(ReportProtocol).Call(context.Background(), "leader", []byte("x"))
			if !errors.Is(err, tc.cause) {
				t.Fatalf("Call: %v; want the cause %q", err, tc.cause)
			}
			var dial *DialError
			if errors.As(err, &dial) != errors.Is(err, transport.ErrNotDelivered) {
				t.Errorf("Call: %v: a failed dial (only) matches %v", err, transport.ErrNotDelivered)
			}
			msg := err.Error()
			for _, want := range []string{"leader", tc.says} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "backoff") {
				t.Errorf("error %q says backoff", msg)
			}
		})
	}
}

// TestStreamCauses: the errors libp2p returns for each failure, as
// they come wrapped, map to one cause each.
func TestStreamCauses(t *testing.T) {
	opErr := func(errno error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: errno}}
	}
	for _, tc := range []struct {
		name  string
		err   error
		cause error // nil: no known cause
	}{
		{"refused", opErr(syscall.ECONNREFUSED), ErrConnRefused},
		{"host unreachable", opErr(syscall.EHOSTUNREACH), ErrNoRoute},
		{"network unreachable", opErr(syscall.ENETUNREACH), ErrNoRoute},
		{"peer ID mismatch", fmt.Errorf("failed to negotiate security protocol: %w", sec.ErrPeerIDMismatch{}), ErrPeerMismatch},
		{"reset in the handshake", fmt.Errorf("failed to negotiate security protocol: %w", opErr(syscall.ECONNRESET)), ErrConnReset},
		{"closed in the handshake", fmt.Errorf("failed to negotiate security protocol: %w", io.EOF), ErrConnReset},
		{"broken pipe", opErr(syscall.EPIPE), ErrConnReset},
		{"stream reset", fmt.Errorf("reading frame header: %w", network.ErrReset), ErrConnReset},
		{"truncated frame", fmt.Errorf("frame truncated: %w", io.ErrUnexpectedEOF), ErrConnReset},
		{"resource limit", fmt.Errorf("transient: cannot reserve inbound connection: %w", network.ErrResourceLimitExceeded), ErrResourceLimit},
		{"deadline", fmt.Errorf("%w: %w", context.DeadlineExceeded, network.ErrReset), ErrDialTimeout},
		{"dial timeout", swarm.ErrDialTimeout, ErrDialTimeout},
		{"other", errors.New("selected unknown security transport"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dialCause(tc.err); got != tc.cause {
				t.Errorf("dialCause(%v) = %v, want %v", tc.err, got, tc.cause)
			}
			if tc.cause == nil {
				return
			}
			err := explainStream("leader", "response from", tc.err)
			if tc.cause != ErrConnRefused && tc.cause != ErrNoRoute && tc.cause != ErrPeerMismatch && !errors.Is(err, tc.cause) {
				t.Errorf("explainStream: %v does not match %v", err, tc.cause)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("explainStream: %v lost the original error", err)
			}
		})
	}
}

// countRetries is a slog handler counting "call failed; retrying".
type countRetries struct{ n atomic.Int32 }

func (c *countRetries) Enabled(context.Context, slog.Level) bool { return true }
func (c *countRetries) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "call failed; retrying" {
		c.n.Add(1)
	}
	return nil
}
func (c *countRetries) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *countRetries) WithGroup(string) slog.Handler      { return c }

// TestCallRetriesAcrossOutage: a call made while nothing listens at the
// server's address keeps dialling through its retry window (libp2p's
// dial backoff cleared between attempts) and succeeds once the server
// starts there.
func TestCallRetriesAcrossOutage(t *testing.T) {
	addr := freeAddr(t)
	key := newKey(t)
	id, _ := peer.IDFromPrivateKey(key)
	retries := &countRetries{}
	c, err := New(Config{Key: newKey(t), Peers: map[transport.PeerID]peer.AddrInfo{"leader": {ID: id, Addrs: []ma.Multiaddr{addr}}},
		Logger: slog.New(retries), RetryWindow: time.Minute, Backoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type result struct {
		resp []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Conn(ReportProtocol).Call(context.Background(), "leader", []byte("late"))
		done <- result{resp, err}
	}()
	for retries.n.Load() < DefaultAttempts+1 {
		select {
		case r := <-done:
			t.Fatalf("Call returned while nothing listened: %q, %v", r.resp, r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	srv, err := New(Config{Key: key, Self: "leader", Listen: []ma.Multiaddr{addr}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Handle(ReportProtocol, nil, echo)
	r := <-done
	if want := c.ID().String() + ":late"; r.err != nil || string(r.resp) != want {
		t.Fatalf("Call across the outage = %q, %v; want %q", r.resp, r.err, want)
	}
	t.Logf("succeeded after %d failed attempts", retries.n.Load())
}

// TestRetryWindowGivesUp: with nothing listening, a call with a retry
// window makes more than DefaultAttempts attempts, none started after
// the window, and fails with the cause and the number of attempts.
func TestRetryWindowGivesUp(t *testing.T) {
	id, _ := peer.IDFromPrivateKey(newKey(t))
	retries := &countRetries{}
	c, err := New(Config{Key: newKey(t), Peers: map[transport.PeerID]peer.AddrInfo{"leader": {ID: id, Addrs: []ma.Multiaddr{freeAddr(t)}}},
		Logger: slog.New(retries), RetryWindow: 500 * time.Millisecond, Backoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Conn(ReportProtocol).Call(context.Background(), "leader", []byte("x"))
	if !errors.Is(err, ErrConnRefused) || !strings.Contains(err.Error(), "gave up after") {
		t.Fatalf("Call: %v; want connection refused, saying it gave up", err)
	}
	if n := retries.n.Load(); n < DefaultAttempts {
		t.Errorf("%d retries in the window, want more than the %d of a call without one", n, DefaultAttempts-1)
	}
}

// TestRetrierSchedule: the waits double up to the cap, each drawn from
// the upper half of its bound; attempts stop at Attempts.
func TestRetrierSchedule(t *testing.T) {
	r := &retrier{start: time.Now(), attempts: 8, wait: 100 * time.Millisecond, max: 400 * time.Millisecond}
	bounds := []time.Duration{100, 200, 400, 400, 400, 400, 400}
	for k, b := range bounds {
		b *= time.Millisecond
		wait, ok := r.next(k + 1)
		if !ok || wait < b/2 || wait > b {
			t.Errorf("wait %d = %v, %v; want in [%v, %v]", k+1, wait, ok, b/2, b)
		}
	}
	if _, ok := r.next(8); ok {
		t.Error("a 9th attempt after Attempts = 8")
	}
}
