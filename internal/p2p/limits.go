package p2p

import (
	"fmt"
	"log/slog"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/network"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	bconnmgr "github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/x/rate"
	ma "github.com/multiformats/go-multiaddr"
	xrate "golang.org/x/time/rate"
)

// Limits bound the connections a host accepts, per remote address and
// in all. An "address" is one IPv4 address or one IPv6 /56, the unit
// behind which a NAT hides many parties; loopback is never limited.
// Zero fields take the Default values below.
//
// go-libp2p's own defaults suit a peer-to-peer node (8 concurrent
// connections and 0.2 new ones per second, after a burst of 16, per
// IPv4 address): a server whose parties share one address would refuse
// most of them, and the party would see only a reset handshake.
type Limits struct {
	// ConnsPerAddr caps the connections from one address in their
	// handshake (handshakes, which closes an idle one a second old to
	// make room for a new one) and, with handshakeReserve more for those
	// just closed, all its concurrent connections.
	ConnsPerAddr int
	// ConnRate is the sustained rate (connections per second) at which
	// one address may open new connections once its burst is spent.
	ConnRate float64
	// ConnBurst is how many new connections one address may open at once
	// before ConnRate applies.
	ConnBurst int
	// Conns caps the inbound connections in their handshake from all
	// addresses as ConnsPerAddr does per address, and (with the reserve)
	// all concurrent inbound connections and, as many, the streams being
	// negotiated.
	Conns int
}

// Defaults of Limits: a server expecting thousands of short-lived
// parties, hundreds of them behind one NAT address.
const (
	DefaultConnsPerAddr = 512
	DefaultConnRate     = 50.0
	DefaultConnBurst    = 512
	DefaultConns        = 4096
)

// withDefaults fills the zero fields of l.
func (l Limits) withDefaults() Limits {
	if l.ConnsPerAddr == 0 {
		l.ConnsPerAddr = DefaultConnsPerAddr
	}
	if l.ConnRate == 0 {
		l.ConnRate = DefaultConnRate
	}
	if l.ConnBurst == 0 {
		l.ConnBurst = DefaultConnBurst
	}
	if l.Conns == 0 {
		l.Conns = DefaultConns
	}
	return l
}

// Validate says which limit is out of range.
func (l Limits) Validate() error {
	switch {
	case l.ConnsPerAddr < 0:
		return fmt.Errorf("p2p: connections per address %d is negative", l.ConnsPerAddr)
	case l.ConnRate < 0:
		return fmt.Errorf("p2p: connection rate %g per second is negative", l.ConnRate)
	case l.ConnBurst < 0:
		return fmt.Errorf("p2p: connection burst %d is negative", l.ConnBurst)
	case l.Conns < 0:
		return fmt.Errorf("p2p: connection limit %d is negative", l.Conns)
	}
	return nil
}

// loopback is exempt from the per-address limits, as in go-libp2p.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// resourceOptions are the libp2p options that apply l: a resource
// manager (newResourceManager) and a connection manager that trims idle
// connections only above l.Conns, returned to protect the address book.
func resourceOptions(l Limits, log *slog.Logger) ([]libp2p.Option, connmgr.ConnManager, error) {
	rm, err := newResourceManager(l, log)
	if err != nil {
		return nil, nil, err
	}
	cm, err := bconnmgr.NewConnManager(l.Conns/2, l.Conns, bconnmgr.WithGracePeriod(time.Minute))
	if err != nil {
		rm.Close()
		return nil, nil, fmt.Errorf("p2p: connection manager: %w", err)
	}
	return []libp2p.Option{libp2p.ResourceManager(rm), libp2p.ConnectionManager(cm)}, cm, nil
}

// newResourceManager returns a resource manager with l's per-address
// limits and rate, and system and transient connection and stream
// limits scaled to l.Conns (go-libp2p's memory and file-descriptor
// limits, scaled to the machine, stay). It logs the connections it
// refuses to log, at most once a second.
func newResourceManager(l Limits, log *slog.Logger) (*refusalLog, error) {
	scaling := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&scaling)
	// handshakes holds the connections in their handshake to the limits
	// (closing idle ones to make room); the reserve leaves room for
	// those it just closed, released a moment later.
	conns, streams := rcmgr.LimitVal(l.Conns+handshakeReserve), rcmgr.LimitVal(16*l.Conns)
	wide := rcmgr.ResourceLimits{ConnsInbound: conns, Conns: 2 * conns, StreamsInbound: streams, Streams: 2 * streams}
	partial := rcmgr.PartialLimitConfig{
		System: wide, Transient: wide,
		// One protocol (reports) carries nearly every stream: the
		// system limit above bounds it.
		ProtocolDefault: rcmgr.ResourceLimits{StreamsInbound: rcmgr.Unlimited, Streams: rcmgr.Unlimited},
		// The leader relays every relayed upload to the helper over one
		// connection: one peer may have many streams in flight.
		PeerDefault:         rcmgr.ResourceLimits{StreamsInbound: conns, Streams: 2 * conns},
		ProtocolPeerDefault: rcmgr.ResourceLimits{StreamsInbound: conns, Streams: 2 * conns},
	}
	perAddr := func(bits int) []rcmgr.ConnLimitPerSubnet {
		return []rcmgr.ConnLimitPerSubnet{{PrefixLength: bits, ConnCount: l.ConnsPerAddr + handshakeReserve}}
	}
	rateLimit := rate.Limit{RPS: l.ConnRate, Burst: l.ConnBurst}
	limiter := &rate.Limiter{
		SubnetRateLimiter: rate.SubnetLimiter{
			IPv4SubnetLimits: []rate.SubnetLimit{{PrefixLength: 32, Limit: rateLimit}},
			IPv6SubnetLimits: []rate.SubnetLimit{{PrefixLength: 56, Limit: rateLimit}},
			GracePeriod:      time.Minute,
		},
	}
	var exempt []rcmgr.NetworkPrefixLimit
	for _, p := range loopback {
		limiter.NetworkPrefixLimits = append(limiter.NetworkPrefixLimits, rate.PrefixLimit{Prefix: p})
		exempt = append(exempt, rcmgr.NetworkPrefixLimit{Network: p, ConnCount: 1 << 30})
	}
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(partial.Build(scaling.AutoScale())),
		rcmgr.WithLimitPerSubnet(perAddr(32), perAddr(56)),
		rcmgr.WithNetworkPrefixLimit(exempt[:1], exempt[1:]),
		rcmgr.WithConnRateLimiters(limiter),
		// Its Prometheus statistics, which fedecdf does not export, format
		// a timestamp for every stream and memory event.
		rcmgr.WithMetricsDisabled())
	if err != nil {
		return nil, fmt.Errorf("p2p: resource manager: %w", err)
	}
	return &refusalLog{ResourceManager: rm, log: log, every: xrate.Sometimes{Interval: time.Second}}, nil
}

// refusalLog is a resource manager that logs the connections it refuses,
// at most once a second with the number refused since the last line:
// without it a refused party sees a reset and the server says nothing.
type refusalLog struct {
	network.ResourceManager
	log     *slog.Logger
	refused atomic.Int64
	every   xrate.Sometimes
}

// OpenConnection asks the wrapped manager and logs a refusal.
func (r *refusalLog) OpenConnection(dir network.Direction, usefd bool, endpoint ma.Multiaddr) (network.ConnManagementScope, error) {
	scope, err := r.ResourceManager.OpenConnection(dir, usefd, endpoint)
	if err != nil {
		r.refused.Add(1)
		r.every.Do(func() {
			r.log.Warn("refused a connection: resource limit; if many parties share one address, raise the server's --conns-per-address, --conn-rate or --conn-burst",
				"remote", endpoint.String(), "direction", dir.String(), "refused_since_last_line", r.refused.Swap(0), "err", err)
		})
	}
	return scope, err
}
