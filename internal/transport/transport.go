// Package transport is the seam between the protocol logic and the
// network.
//
// The protocol logic of parties, servers and analysts sees only Conn
// (send one request, wait for its response; core.Conn, public so that
// another module can bring its own transport) and Handler (answer one
// request); messages are opaque, already-encoded byte strings (package
// protocol). Network is the in-process implementation, used by the
// simulator and the tests; a networked one (libp2p) can replace it
// without touching the logic.
//
// Network counts, for every peer, the bytes it sends and receives and the
// round trips it initiates, which is the cost model of dp-ecdf §4.1–4.2.
// Tests inject link failures into it (SetFaults): a request lost before
// its peer sees it, or a response lost after the peer acted on it.
package transport

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/fedecdf/fedecdf/core"
)

// PeerID names a participant (core.PeerID).
type PeerID = core.PeerID

// Handler answers one request from peer from. It must not retain req.
type Handler func(ctx context.Context, from PeerID, req []byte) []byte

// Conn is one participant's view of the network (core.Conn).
type Conn = core.Conn

// Stats is the traffic of one peer.
type Stats struct {
	BytesSent     int64 // request bytes it sent plus response bytes it returned
	BytesReceived int64 // request bytes it was sent plus response bytes it got
	Calls         int64 // round trips it initiated
}

// Network is an in-process message network. It copies every message, so
// peers share no memory, and it is safe for concurrent use.
type Network struct {
	mu       sync.RWMutex
	handlers map[PeerID]Handler
	stats    map[PeerID]*counters
	faults   Faults
}

// Fault is what the network does with one call.
type Fault int

// The faults a Network injects.
const (
	// Deliver delivers the request and returns the response.
	Deliver Fault = iota
	// LoseRequest fails the call before the peer sees the request.
	LoseRequest
	// LoseResponse delivers the request, lets the peer act on it, and
	// fails the call without its response.
	LoseResponse
)

// Faults decides the fate of each call from one peer to another.
type Faults func(from, to PeerID, req []byte) Fault

// ErrLinkCut is wrapped by the error of a call that a fault failed.
var ErrLinkCut = errors.New("link cut")

// ErrNotDelivered is matched by the error of a call whose request the
// callee's logic never received (no connection, or the callee refused
// the caller before reading it): the call had no effect there.
var ErrNotDelivered = errors.New("the request was not delivered")

// SetFaults makes f decide every later call (nil: deliver them all).
func (n *Network) SetFaults(f Faults) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.faults = f
}

type counters struct {
	sent, received, calls atomic.Int64
}

// NewNetwork returns an empty network.
func NewNetwork() *Network {
	return &Network{handlers: make(map[PeerID]Handler), stats: make(map[PeerID]*counters)}
}

// Register makes h answer the requests sent to id.
func (n *Network) Register(id PeerID, h Handler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.handlers[id] = h
}

// Conn returns the connection of peer id.
func (n *Network) Conn(id PeerID) Conn { return &conn{net: n, self: id} }

func (n *Network) counters(id PeerID) *counters {
	n.mu.RLock()
	c, ok := n.stats[id]
	n.mu.RUnlock()
	if ok {
		return c
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok = n.stats[id]; !ok {
		c = new(counters)
		n.stats[id] = c
	}
	return c
}

// Stats returns the traffic of peer id so far.
func (n *Network) Stats(id PeerID) Stats {
	c := n.counters(id)
	return Stats{BytesSent: c.sent.Load(), BytesReceived: c.received.Load(), Calls: c.calls.Load()}
}

// Peers returns the peers that have sent or received anything, sorted.
func (n *Network) Peers() []PeerID {
	n.mu.RLock()
	defer n.mu.RUnlock()
	ids := make([]PeerID, 0, len(n.stats))
	for id := range n.stats {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

type conn struct {
	net  *Network
	self PeerID
}

func (c *conn) Self() PeerID { return c.self }

func (c *conn) Call(ctx context.Context, to PeerID, req []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.net.mu.RLock()
	h, ok := c.net.handlers[to]
	faults := c.net.faults
	c.net.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("transport: no peer %q", to)
	}
	fault := Deliver
	if faults != nil {
		fault = faults(c.self, to, req)
	}
	if fault == LoseRequest {
		return nil, fmt.Errorf("transport: %s → %s: %w before the request arrived", c.self, to, ErrLinkCut)
	}
	from, dst := c.net.counters(c.self), c.net.counters(to)
	from.calls.Add(1)
	from.sent.Add(int64(len(req)))
	dst.received.Add(int64(len(req)))
	resp := h(ctx, c.self, append([]byte(nil), req...))
	if fault == LoseResponse {
		return nil, fmt.Errorf("transport: %s → %s: %w after the request arrived (response lost)", c.self, to, ErrLinkCut)
	}
	dst.sent.Add(int64(len(resp)))
	from.received.Add(int64(len(resp)))
	return append([]byte(nil), resp...), nil
}
