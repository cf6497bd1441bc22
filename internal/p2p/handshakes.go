package p2p

import (
	"container/list"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	manet "github.com/multiformats/go-multiaddr/net"
)

// handshakeGrace is how long an inbound connection still in its
// handshake is safe from being closed to make room: an honest peer
// completes the handshake in a few round trips.
const handshakeGrace = time.Second

// handshakeExpiry is how long after its acceptance a connection that
// never completed its handshake is forgotten: go-libp2p's upgrader gives
// up on it after 15 s and closes it.
const handshakeExpiry = 20 * time.Second

// handshakeReserve is how many connections beyond Limits.ConnsPerAddr
// (and Limits.Conns) the resource manager still accepts from one address
// (and in all): room for the connections just closed to make room, whose
// resources it releases a moment later.
const handshakeReserve = 64

// handshakes admits the inbound connections that have not completed
// their handshake (the gater's InterceptAccept to InterceptSecured):
// at most Limits.ConnsPerAddr per remote address and Limits.Conns in
// all. A new connection at a full address (or host) closes the oldest
// one still in its handshake if that one is at least handshakeGrace old,
// and is refused otherwise. Before the handshake no one is known, the
// manifest's analysts and servers included, so this is what keeps them
// from being locked out by strangers: idle TCP connections from their
// address hold no place for longer than a second once it is needed,
// instead of the 15 s the upgrader waits for a handshake.
type handshakes struct {
	perAddr, all int
	now          func() time.Time

	mu      sync.Mutex
	waiting list.List // of *handshake, oldest first
	addrs   map[netip.Prefix]*list.List
	byConn  map[connKey]*handshake
}

// connKey names an inbound connection by its two ends.
type connKey struct{ local, remote string }

// handshake is one inbound connection in its handshake.
type handshake struct {
	key     connKey
	conn    io.Closer
	addr    netip.Prefix
	since   time.Time
	all, of *list.Element
}

func newHandshakes(l Limits) *handshakes {
	return &handshakes{perAddr: l.ConnsPerAddr, all: l.Conns, now: time.Now, addrs: make(map[netip.Prefix]*list.List), byConn: make(map[connKey]*handshake)}
}

// remoteUnit returns the per-address unit of a connection's remote end:
// its IPv4 address or IPv6 /56 (the zero prefix if it has no IP).
func remoteUnit(c network.ConnMultiaddrs) netip.Prefix {
	ip, err := manet.ToIP(c.RemoteMultiaddr())
	if err != nil {
		return netip.Prefix{}
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Prefix{}
	}
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(56)
	return p
}

// accept admits the inbound connection c, closing the connection that
// makes room for it if any, or reports that it is refused.
func (h *handshakes) accept(c network.ConnMultiaddrs) bool {
	closer, ok := c.(io.Closer) // go-libp2p passes the raw connection
	if !ok {
		return true
	}
	addr := remoteUnit(c)
	h.mu.Lock()
	now := h.now()
	h.expire(now)
	of := h.addrs[addr]
	if of == nil {
		of = new(list.List)
		h.addrs[addr] = of
	}
	var room *handshake
	switch {
	case of.Len() >= h.perAddr:
		room = h.evictable(of.Front(), now)
		if room == nil {
			h.mu.Unlock()
			return false
		}
	case h.waiting.Len() >= h.all:
		room = h.evictable(h.waiting.Front(), now)
		if room == nil {
			h.mu.Unlock()
			return false
		}
	}
	if room != nil {
		h.remove(room)
	}
	w := &handshake{key: keyOf(c), conn: closer, addr: addr, since: now}
	w.all, w.of = h.waiting.PushBack(w), of.PushBack(w)
	h.byConn[w.key] = w
	h.mu.Unlock()
	if room != nil {
		room.conn.Close()
	}
	return true
}

func keyOf(c network.ConnMultiaddrs) connKey {
	return connKey{c.LocalMultiaddr().String(), c.RemoteMultiaddr().String()}
}

// secured ends the handshake of c: it no longer holds a place.
func (h *handshakes) secured(c network.ConnMultiaddrs) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.byConn[keyOf(c)]; w != nil {
		h.remove(w)
	}
}

// evictable returns the handshake of e if it is at least handshakeGrace
// old, or nil.
func (h *handshakes) evictable(e *list.Element, now time.Time) *handshake {
	if e == nil {
		return nil
	}
	if w := e.Value.(*handshake); now.Sub(w.since) >= handshakeGrace {
		return w
	}
	return nil
}

// expire forgets the handshakes the upgrader has given up on; the
// caller holds h.mu.
func (h *handshakes) expire(now time.Time) {
	for e := h.waiting.Front(); e != nil; e = h.waiting.Front() {
		w := e.Value.(*handshake)
		if now.Sub(w.since) < handshakeExpiry {
			return
		}
		h.remove(w)
	}
}

// remove forgets w; the caller holds h.mu.
func (h *handshakes) remove(w *handshake) {
	h.waiting.Remove(w.all)
	of := h.addrs[w.addr]
	of.Remove(w.of)
	if of.Len() == 0 {
		delete(h.addrs, w.addr)
	}
	if h.byConn[w.key] == w {
		delete(h.byConn, w.key)
	}
}

// numWaiting returns the connections in their handshake.
func (h *handshakes) numWaiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting.Len()
}
