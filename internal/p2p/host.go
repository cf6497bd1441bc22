package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"go.uber.org/fx"

	"github.com/fedecdf/fedecdf/internal/transport"
)

// The protocol IDs of fedecdf streams. The trailing number is the
// protocol version; a peer speaking another version fails negotiation.
const (
	ReportProtocol protocol.ID = "/fedecdf/report/1" // party → server
	QueryProtocol  protocol.ID = "/fedecdf/query/1"  // analyst → leader
	PeerProtocol   protocol.ID = "/fedecdf/peer/1"   // leader → helper
	RelayProtocol  protocol.ID = "/fedecdf/relay/1"  // party → leader, helper's share sealed
	SealedProtocol protocol.ID = "/fedecdf/sealed/1" // leader → helper, a relayed sealed share
)

// Defaults of Config.
const (
	DefaultMaxMessage  = 1 << 28
	DefaultCallTimeout = 5 * time.Minute
	// DefaultConnectTimeout bounds the opening of a call's stream
	// (connecting, the handshake, the protocol's negotiation): a peer
	// that accepts and stalls fails the attempt then, not at the call's
	// timeout, which a long query needs.
	DefaultConnectTimeout = 15 * time.Second
	DefaultReadTimeout    = 30 * time.Second
	DefaultAttempts       = 3
	DefaultBackoff        = 200 * time.Millisecond
	DefaultMaxBackoff     = 5 * time.Second
)

// Config configures a Host.
type Config struct {
	// Key is the host's libp2p identity; its peer ID is what others pin.
	Key crypto.PrivKey
	// Self is the host's name in the protocol ("leader", "helper"); the
	// peer ID's string form when empty.
	Self transport.PeerID
	// Listen are the multiaddrs to listen on; none for a host that only
	// dials (parties, analysts).
	Listen []ma.Multiaddr
	// Peers is the address book: every peer the host may dial or
	// recognise by name. Peers without addresses (analysts) are only
	// recognised. The host dials no peer outside this book.
	Peers map[transport.PeerID]peer.AddrInfo
	// MaxMessage caps a request or response (DefaultMaxMessage if 0).
	MaxMessage int
	// CallTimeout bounds one attempt of a call, connection included
	// (DefaultCallTimeout if 0); ConnectTimeout the opening of its
	// stream, when shorter (DefaultConnectTimeout if 0).
	CallTimeout, ConnectTimeout time.Duration
	// ReadTimeout bounds the reading of a request by a handler
	// (DefaultReadTimeout if 0).
	ReadTimeout time.Duration
	// Attempts is how many times Call tries (DefaultAttempts if 0 and
	// RetryWindow is 0; unbounded if 0 and RetryWindow is set).
	Attempts int
	// RetryWindow, when positive, makes Call retry a failed call until
	// this long after its first attempt began, long enough to ride out a
	// server's restart; the last attempt begins as it ends.
	RetryWindow time.Duration
	// Backoff is the wait before the second attempt; it doubles after
	// every failed attempt up to MaxBackoff, and each wait is drawn
	// uniformly from its upper half (jitter, so that parties refused
	// together do not return together) (DefaultBackoff if 0).
	Backoff time.Duration
	// MaxBackoff caps the wait between attempts (DefaultMaxBackoff if 0).
	MaxBackoff time.Duration
	// StopUnanswered makes Call give up at the first attempt whose
	// stream could not be opened within ConnectTimeout (nothing was
	// sent): a peer that does not answer one ConnectTimeout is stopped,
	// hung or unreachable, and a caller someone waits on (the leader
	// serving an analyst's query) says so after one attempt rather than
	// after Attempts of them. Refused connections are still retried:
	// they fail at once, and a restarting peer ends them.
	StopUnanswered bool
	// Limits bound the inbound connections of a listening host per
	// remote address and in all (zero fields: the Default values).
	Limits Limits
	// Logger receives refusals and handler failures (slog.Default if nil).
	Logger *slog.Logger
}

// Host is one participant's libp2p host: authenticated, encrypted
// streams (Noise over TCP, yamux), nothing that reaches beyond the given
// addresses (no relay, NAT port mapping, hole punching, mDNS or DHT).
type Host struct {
	cfg   Config
	h     host.Host
	names map[peer.ID]transport.PeerID
	log   *slog.Logger

	mu      sync.Mutex // guards closed and the Add side of running
	closed  bool
	running sync.WaitGroup
}

// New starts a host.
func New(cfg Config) (*Host, error) {
	if cfg.Key == nil {
		return nil, errors.New("p2p: no identity key")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	names := make(map[peer.ID]transport.PeerID, len(cfg.Peers))
	for name, info := range cfg.Peers {
		if err := info.ID.Validate(); err != nil {
			return nil, fmt.Errorf("p2p: peer %q: %w", name, err)
		}
		if other, dup := names[info.ID]; dup {
			return nil, fmt.Errorf("p2p: peers %q and %q have the same peer ID %s", other, name, info.ID)
		}
		names[info.ID] = name
	}
	opts := []libp2p.Option{
		libp2p.Identity(cfg.Key),
		libp2p.Security(noise.ID, noise.New),
		// Exclusive binding: with SO_REUSEPORT a second server on the
		// same address would start too and take part of the traffic.
		libp2p.Transport(tcp.NewTCPTransport, tcp.DisableReuseport()),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		libp2p.DisableIdentifyAddressDiscovery(),
		libp2p.Ping(false),
		libp2p.ConnectionGater(&gater{known: names, hs: newHandshakes(cfg.Limits)}),
		// Start-up failures come back as New's error; fx's own log
		// of them would only repeat it, unformatted.
		libp2p.WithFxOption(fx.NopLogger),
	}
	limits, cm, err := resourceOptions(cfg.Limits, cfg.Logger)
	if err != nil {
		return nil, err
	}
	opts = append(opts, limits...)
	if len(cfg.Listen) == 0 {
		opts = append(opts, libp2p.NoListenAddrs)
	} else {
		opts = append(opts, libp2p.ListenAddrs(cfg.Listen...))
	}
	h, err := libp2p.New(opts...)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use") {
			return nil, fmt.Errorf("%w: %s (%v)",
				ErrAddrInUse, listenList(cfg.Listen), err)
		}
		return nil, fmt.Errorf("p2p: starting the host: %w", err)
	}
	for _, info := range cfg.Peers {
		h.Peerstore().AddAddrs(info.ID, info.Addrs, peerstore.PermanentAddrTTL)
		// The servers and analysts keep their connections when the
		// connection manager trims idle parties.
		cm.Protect(info.ID, "fedecdf-address-book")
	}
	if cfg.Self == "" {
		cfg.Self = transport.PeerID(h.ID().String())
	}
	return &Host{cfg: cfg, h: h, names: names, log: cfg.Logger}, nil
}

// ErrAddrInUse is returned by New when a listen address is taken.
var ErrAddrInUse = errors.New("p2p: address already in use")

// listenList formats addrs for an error message.
func listenList(addrs []ma.Multiaddr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

func withDefaults(cfg Config) Config {
	if cfg.MaxMessage == 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.Attempts == 0 && cfg.RetryWindow <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// ID returns the host's peer ID.
func (h *Host) ID() peer.ID { return h.h.ID() }

// Addrs returns the addresses the host listens on.
func (h *Host) Addrs() []ma.Multiaddr { return h.h.Addrs() }

// Close stops the host: no new streams are served, handlers still
// running are waited for, and every connection is closed.
func (h *Host) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.running.Wait()
	return h.h.Close()
}

// name returns the book name of p, or its peer ID string if unknown.
func (h *Host) name(p peer.ID) (transport.PeerID, bool) {
	if name, ok := h.names[p]; ok {
		return name, true
	}
	return transport.PeerID(p.String()), false
}

// Handle serves protocol proto with handler. allowed lists the book
// names that may call; nil allows any peer, known or not (parties). A
// stream from any other peer is answered with a refusal frame and never
// reaches handler. The remote peer is identified by the Noise handshake.
// A handler returning nil answers nothing: the stream is reset, and
// the caller's Call sees a transient failure and retries.
func (h *Host) Handle(proto protocol.ID, allowed []transport.PeerID, handler transport.Handler) {
	h.h.SetStreamHandler(proto, func(s network.Stream) {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			_ = s.Reset()
			return
		}
		h.running.Add(1)
		h.mu.Unlock()
		defer h.running.Done()
		h.serve(s, allowed, handler)
	})
}

func (h *Host) serve(s network.Stream, allowed []transport.PeerID, handler transport.Handler) {
	defer s.Close()
	from, known := h.name(s.Conn().RemotePeer())
	proto := s.Protocol()
	if allowed != nil && !(known && contains(allowed, from)) {
		h.log.Warn("refused a stream from an unauthorised peer", "protocol", proto, "peer", from)
		_ = s.SetWriteDeadline(time.Now().Add(h.cfg.ReadTimeout))
		_ = writeFrame(s, frameRefusal, []byte(fmt.Sprintf("peer %s may not use %s", from, proto)), maxRefusalLen)
		return
	}
	_ = s.SetReadDeadline(time.Now().Add(h.cfg.ReadTimeout))
	kind, req, err := readFrame(s, h.cfg.MaxMessage)
	if err == nil && kind != frameMessage {
		err = fmt.Errorf("p2p: a request cannot be a refusal frame")
	}
	if err != nil {
		h.log.Warn("dropped a malformed request", "protocol", proto, "peer", from, "err", err)
		_ = s.Reset()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.CallTimeout)
	defer cancel()
	resp := handler(ctx, from, req)
	if resp == nil { // the handler has no answer yet: the caller retries
		_ = s.Reset()
		return
	}
	_ = s.SetWriteDeadline(time.Now().Add(h.cfg.ReadTimeout))
	if err := writeFrame(s, frameMessage, resp, h.cfg.MaxMessage); err != nil {
		h.log.Warn("could not send a response", "protocol", proto, "peer", from, "err", err)
		_ = s.Reset()
	}
}

func contains(list []transport.PeerID, p transport.PeerID) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

// Conn returns the host's transport.Conn over protocol proto: Call
// reaches a peer of the address book by name.
func (h *Host) Conn(proto protocol.ID) transport.Conn { return &conn{h: h, proto: proto} }

type conn struct {
	h     *Host
	proto protocol.ID
}

func (c *conn) Self() transport.PeerID { return c.h.cfg.Self }

// Call sends req and waits for the response, trying up to Attempts
// times or for RetryWindow, with a timeout per attempt and a doubling,
// jittered backoff in between; before each retry libp2p's dial backoff
// for the peer is cleared, so every attempt dials anew. A retry may
// deliver req twice (the response of the first delivery may be the
// one lost), so the handlers behind fedecdf protocols are idempotent:
// uploads and shares are keyed by report ID, queries by release.
func (c *conn) Call(ctx context.Context, to transport.PeerID, req []byte) ([]byte, error) {
	info, ok := c.h.cfg.Peers[to]
	if !ok || len(info.Addrs) == 0 {
		return nil, fmt.Errorf("p2p: no address for peer %q in the manifest", to)
	}
	if len(req) > c.h.cfg.MaxMessage {
		return nil, fmt.Errorf("p2p: request of %d bytes to %s exceeds the limit %d", len(req), to, c.h.cfg.MaxMessage)
	}
	var resp []byte
	err := Retry(ctx, c.h.cfg, func() error {
		c.h.clearBackoff(info.ID)
		var err error
		resp, err = c.attempt(ctx, info.ID, to, req)
		return err
	}, func(err error) bool {
		// A refusal or a wrong key at the address will not change on a retry.
		if IsRefused(err) || errors.Is(err, ErrPeerMismatch) {
			return false
		}
		var u *unanswered
		return !(c.h.cfg.StopUnanswered && errors.As(err, &u))
	}, "peer", to, "protocol", c.proto)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Retry calls try until it succeeds, fails with an error that
// transient rejects, or the retry schedule of cfg ends (Attempts or
// RetryWindow, with Backoff doubling up to MaxBackoff, jittered; its
// zero fields the defaults), and returns its last error, saying how
// many attempts were made when more than one. Retries are logged to
// cfg.Logger at debug level with logArgs. A host's calls retry under
// its Config, and so do the sealed uploads, which have no host.
func Retry(ctx context.Context, cfg Config, try func() error, transient func(error) bool, logArgs ...any) error {
	cfg = withDefaults(cfg)
	r := &retrier{start: time.Now(), attempts: cfg.Attempts, window: cfg.RetryWindow, wait: cfg.Backoff, max: cfg.MaxBackoff}
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil || !transient(err) {
			return err
		}
		wait, again := r.next(attempt)
		if !again {
			return r.gaveUp(attempt, err)
		}
		cfg.Logger.Debug("call failed; retrying", append(logArgs, "attempt", attempt, "wait", wait, "err", err)...)
		select {
		case <-ctx.Done():
			return fmt.Errorf("p2p: %w (last attempt: %w)", ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// clearBackoff forgets libp2p's dial backoff for peer p: the next
// attempt dials instead of failing at once with "dial backoff".
func (h *Host) clearBackoff(p peer.ID) {
	if sw, ok := h.h.Network().(*swarm.Swarm); ok {
		sw.Backoff().Clear(p)
	}
}

// retrier is the retry schedule of one call.
type retrier struct {
	start    time.Time
	attempts int           // 0: bounded by the window only
	window   time.Duration // 0: bounded by attempts only
	wait     time.Duration // the next wait's upper bound
	max      time.Duration
}

// next returns the wait before attempt+1, or false when no attempt
// may follow attempt: the attempts are spent, or the window is over.
func (r *retrier) next(attempt int) (time.Duration, bool) {
	if r.attempts > 0 && attempt >= r.attempts {
		return 0, false
	}
	wait := r.wait/2 + rand.N(r.wait/2+1)
	r.wait = min(2*r.wait, r.max)
	if r.window > 0 {
		left := r.window - time.Since(r.start)
		if left <= 0 {
			return 0, false
		}
		wait = min(wait, left) // the last attempt begins as the window ends
	}
	return wait, true
}

// gaveUp wraps the last attempt's error with how long the call tried.
func (r *retrier) gaveUp(attempts int, err error) error {
	if attempts == 1 {
		return err
	}
	return fmt.Errorf("%w (gave up after %d attempts in %v)", err, attempts, time.Since(r.start).Round(100*time.Millisecond))
}

func (c *conn) attempt(ctx context.Context, id peer.ID, to transport.PeerID, req []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.h.cfg.CallTimeout)
	defer cancel()
	// Every attempt dials for real: the swarm's own dial backoff would
	// make a retry fail at once with "dial backoff", hiding the cause.
	ctx = network.WithForceDirectDial(ctx, "fedecdf retries a call itself")
	open, cancelOpen := context.WithTimeout(ctx, c.h.cfg.ConnectTimeout)
	s, err := c.h.h.NewStream(open, id, c.proto)
	timedOut := errors.Is(open.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancelOpen()
	if err != nil {
		derr := explainDial(to, err)
		if derr == nil {
			derr = explainStream(to, fmt.Sprintf("opening a %s stream to", c.proto), err)
		}
		if timedOut {
			return nil, &unanswered{err: derr, peer: to, after: c.h.cfg.ConnectTimeout}
		}
		return nil, derr
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { _ = s.Reset() })
	defer stop()
	fail := func(what string, err error) ([]byte, error) {
		_ = s.Reset()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return nil, explainStream(to, what, err)
	}
	if err := writeFrame(s, frameMessage, req, c.h.cfg.MaxMessage); err != nil {
		return fail("sending to", err)
	}
	if err := s.CloseWrite(); err != nil {
		return fail("sending to", err)
	}
	kind, resp, err := readFrame(s, c.h.cfg.MaxMessage)
	if err != nil {
		return fail("response from", err)
	}
	if kind == frameRefusal {
		return nil, &RefusedError{Peer: string(to), Reason: string(resp)}
	}
	return resp, nil
}

// unanswered is the failure of an attempt whose stream was not opened
// within the connect timeout: the peer is stopped, hung or unreachable.
type unanswered struct {
	err   error
	peer  transport.PeerID
	after time.Duration
}

func (u *unanswered) Error() string {
	return fmt.Sprintf("p2p: the %s is not answering (stopped, hung or unreachable): no connection within %v: %v", u.peer, u.after, u.err)
}

func (u *unanswered) Unwrap() error { return u.err }

// gater lets a host dial only the peers of its address book; inbound
// connections are accepted from anyone (parties are not in the book)
// within the limits of handshakes, and authorised per protocol by
// Handle.
type gater struct {
	known map[peer.ID]transport.PeerID
	hs    *handshakes
}

func (g *gater) InterceptPeerDial(p peer.ID) bool { _, ok := g.known[p]; return ok }
func (g *gater) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool {
	_, ok := g.known[p]
	return ok
}
func (g *gater) InterceptAccept(c network.ConnMultiaddrs) bool { return g.hs.accept(c) }
func (g *gater) InterceptSecured(dir network.Direction, _ peer.ID, c network.ConnMultiaddrs) bool {
	if dir == network.DirInbound {
		g.hs.secured(c)
	}
	return true
}
func (g *gater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }
