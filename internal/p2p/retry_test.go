package p2p

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/transport"
)

// TestRetryWithoutHost: the package-level Retry (the sealed uploads'
// schedule, with no libp2p host) retries transient errors until success
// or its attempts are spent, stops at once on an error transient
// rejects, and says how many attempts it made.
func TestRetryWithoutHost(t *testing.T) {
	errTransient, errFinal := errors.New("transient"), errors.New("final")
	cfg := Config{Logger: quiet, Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
	for _, c := range []struct {
		name     string
		fails    []error // the errors of the attempts before a success
		want     error
		attempts int
		gaveUp   bool // the error says how many attempts were made
	}{
		{"first attempt succeeds", nil, nil, 1, false},
		{"succeeds after two transient errors", []error{errTransient, errTransient}, nil, 3, false},
		{"a final error stops at once", []error{errTransient, errFinal, errTransient}, errFinal, 2, false},
		{"attempts spent", []error{errTransient, errTransient, errTransient, errTransient, errTransient}, errTransient, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			err := Retry(context.Background(), cfg, func() error {
				n++
				if n <= len(c.fails) {
					return c.fails[n-1]
				}
				return nil
			}, func(err error) bool { return errors.Is(err, errTransient) })
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Retry: %v, want %v", err, c.want)
			}
			if n != c.attempts {
				t.Errorf("%d attempts, want %d", n, c.attempts)
			}
			if got := err != nil && strings.Contains(err.Error(), "gave up after 4 attempts"); got != c.gaveUp {
				t.Errorf("error %q: says it gave up: %v, want %v", err, got, c.gaveUp)
			}
		})
	}
}

// TestRetryStopsWithContext: a cancelled context ends the retries with
// its error and the last attempt's.
func TestRetryStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errTransient := errors.New("transient")
	cfg := Config{Logger: quiet, RetryWindow: time.Hour, Backoff: time.Hour, MaxBackoff: time.Hour}
	err := Retry(ctx, cfg, func() error { cancel(); return errTransient }, func(error) bool { return true })
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errTransient) {
		t.Fatalf("Retry: %v, want context.Canceled and the last attempt's error", err)
	}
}

// TestConnectTimeoutBoundsAnAttempt: a peer that accepts the TCP
// connection and never answers fails each attempt at ConnectTimeout,
// not at the (long) CallTimeout a query's answer may need, and the
// attempts are retried within the window: the call ends within the
// window plus one connect timeout (checked with tenfold slack).
func TestConnectTimeoutBoundsAnAttempt(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	silent := rawListener(t, func(c *net.TCPConn) {
		<-hold
		c.Close()
	})
	id, _ := peer.IDFromPrivateKey(newKey(t))
	const window, connect = 500 * time.Millisecond, 200 * time.Millisecond
	c, err := New(Config{Key: newKey(t), Peers: map[transport.PeerID]peer.AddrInfo{"leader": {ID: id, Addrs: []ma.Multiaddr{silent}}},
		Logger: quiet, RetryWindow: window, Backoff: 10 * time.Millisecond, CallTimeout: time.Hour, ConnectTimeout: connect})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Conn(QueryProtocol).Call(context.Background(), "leader", []byte("x"))
	took := time.Since(start)
	if !errors.Is(err, ErrDialTimeout) || !strings.Contains(err.Error(), "gave up after") {
		t.Fatalf("Call: %v, want %v after several attempts", err, ErrDialTimeout)
	}
	if bound := 10 * (window + connect); took > bound {
		t.Errorf("the call took %v, beyond %v", took, bound)
	}
}

// TestStopUnanswered: under Config.StopUnanswered, a call to a peer
// whose address accepts connections and never answers is given up after
// its first attempt, saying the peer is not answering, where the
// default schedule makes all its Attempts; a refused connection is
// still retried. Attempts are counted at the listener.
func TestStopUnanswered(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	var accepted atomic.Int64
	silent := rawListener(t, func(c *net.TCPConn) {
		accepted.Add(1)
		<-hold
		c.Close()
	})
	closed := rawListener(t, func(c *net.TCPConn) {
		accepted.Add(1)
		c.SetLinger(0)
		c.Close() // reset during the handshake
	})
	id, _ := peer.IDFromPrivateKey(newKey(t))
	for _, c := range []struct {
		name  string
		addr  ma.Multiaddr
		stop  bool
		tries int64
	}{
		{"stalled, default", silent, false, 3},
		{"stalled, StopUnanswered", silent, true, 1},
		{"reset, StopUnanswered", closed, true, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := New(Config{Key: newKey(t), Peers: map[transport.PeerID]peer.AddrInfo{"helper": {ID: id, Addrs: []ma.Multiaddr{c.addr}}},
				Logger: quiet, Attempts: 3, Backoff: 10 * time.Millisecond, CallTimeout: time.Hour, ConnectTimeout: 200 * time.Millisecond, StopUnanswered: c.stop})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			accepted.Store(0)
			_, err = h.Conn(PeerProtocol).Call(context.Background(), "helper", []byte("x"))
			if err == nil {
				t.Fatal("a call answered")
			}
			if n := accepted.Load(); n != c.tries {
				t.Errorf("%d attempts, want %d: %v", n, c.tries, err)
			}
			if not := strings.Contains(err.Error(), "helper is not answering (stopped"); not != (c.addr.Equal(silent)) {
				t.Errorf("error %q: says not answering %v, want %v", err, not, c.addr.Equal(silent))
			}
		})
	}
}
