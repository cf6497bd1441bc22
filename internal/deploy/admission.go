package deploy

import (
	"container/list"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The defaults of the sealed-upload listener's admission limits
// (UploadLimits).
const (
	DefaultUploadConnsPerAddr  = 256
	DefaultUploadRate          = 32.0
	DefaultUploadBurst         = 64
	DefaultUploadHeaderTimeout = 5 * time.Second
)

// uploadGrace is how long a waiting connection is safe from eviction:
// an honest party writes its frame at once, well within it.
const uploadGrace = time.Second

// UploadLimits bound the connections of the sealed-upload listener that
// have not yet delivered their frame (waiting), per client address (an
// IPv4 address or an IPv6 /56) and in all. The listener accepts every
// connection at once, so that the kernel's backlog never fills and
// drops an honest party's SYN, and decides at once:
//
//   - a connection beyond its address's rate (Rate per second after a
//     burst of Burst) is closed;
//   - when its address already has ConnsPerAddr waiting connections (or
//     the listener Conns), the oldest of them is closed to make room if
//     it has waited at least a second (uploadGrace), and the new one is
//     closed otherwise;
//   - a waiting connection whose frame header has not arrived after
//     HeaderTimeout, or whose whole frame after ServerConfig.UploadTimeout,
//     is closed.
//
// A connection stops waiting, and frees its place, as soon as its frame
// is read. A party whose connection was closed retries within its retry
// window. Guarantee: a connection is never closed for room during its
// first second, and at most Burst + Rate connections of one address are
// that young; so with Burst + Rate < ConnsPerAddr (the defaults: 64 + 32
// < 256), whatever the other clients at its address do, a party that
// connects within its address's rate finds a place, and keeps it if it
// writes its frame within a second. Across addresses the same holds for
// Conns while all clients together open fewer than Conns connections a
// second: many addresses attacking at once can still exhaust it.
// Zero fields take the Default values.
type UploadLimits struct {
	ConnsPerAddr  int
	Rate          float64
	Burst         int
	HeaderTimeout time.Duration
}

// withDefaults fills the zero fields of l.
func (l UploadLimits) withDefaults() UploadLimits {
	if l.ConnsPerAddr <= 0 {
		l.ConnsPerAddr = DefaultUploadConnsPerAddr
	}
	if l.Rate <= 0 {
		l.Rate = DefaultUploadRate
	}
	if l.Burst <= 0 {
		l.Burst = DefaultUploadBurst
	}
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultUploadHeaderTimeout
	}
	return l
}

// clientAddr returns the admission unit of a remote address: its IPv4
// address, or its IPv6 /56.
func clientAddr(a net.Addr) netip.Prefix {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Prefix{}
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() {
		return netip.PrefixFrom(ip, 32)
	}
	p, _ := ip.Prefix(56)
	return p
}

// admission tracks the waiting connections of a listener.
type admission struct {
	lim   UploadLimits
	conns int // the waiting connections allowed in all

	mu      sync.Mutex
	now     func() time.Time // time.Now but in tests
	waiting list.List        // of *waiter, oldest first
	addrs   map[netip.Prefix]*clientState
	swept   time.Time
}

// clientState is the admission state of one client address.
type clientState struct {
	bucket  *rate.Limiter
	waiting list.List // of *waiter, oldest first
}

// waiter is one waiting connection.
type waiter struct {
	conn    net.Conn
	addr    netip.Prefix
	since   time.Time
	all, of *list.Element // in admission.waiting and clientState.waiting
	evicted bool          // closed to make room (under admission.mu)
}

func newAdmission(lim UploadLimits, conns int) *admission {
	return &admission{lim: lim.withDefaults(), conns: conns, now: time.Now, addrs: make(map[netip.Prefix]*clientState)}
}

// Refusal reasons of admit, the label of the log line and the counter.
const (
	refusedRate = "the address's connection rate is exceeded"
	refusedAddr = "the address has too many connections waiting for their frame"
	refusedBusy = "the listener has too many connections waiting for their frame"
)

// admit decides on a new connection c: a waiter, with the connection it
// evicted to make room (nil if none), or the reason it is refused.
func (a *admission) admit(c net.Conn) (w *waiter, evicted net.Conn, refused string) {
	addr := clientAddr(c.RemoteAddr())
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	a.sweep(now)
	st := a.addrs[addr]
	if st == nil {
		st = &clientState{bucket: rate.NewLimiter(rate.Limit(a.lim.Rate), a.lim.Burst)}
		a.addrs[addr] = st
	}
	if !st.bucket.AllowN(now, 1) {
		return nil, nil, refusedRate
	}
	var room *waiter
	switch {
	case st.waiting.Len() >= a.lim.ConnsPerAddr:
		if room = a.evictable(st.waiting.Front(), now); room == nil {
			return nil, nil, refusedAddr
		}
	case a.waiting.Len() >= a.conns:
		if room = a.evictable(a.waiting.Front(), now); room == nil {
			return nil, nil, refusedBusy
		}
	}
	if room != nil {
		room.evicted = true
		a.remove(room)
		evicted = room.conn
	}
	w = &waiter{conn: c, addr: addr, since: now}
	w.all, w.of = a.waiting.PushBack(w), st.waiting.PushBack(w)
	return w, evicted, ""
}

// evictable returns the waiter of e if it has waited at least
// uploadGrace, or nil.
func (a *admission) evictable(e *list.Element, now time.Time) *waiter {
	if e == nil {
		return nil
	}
	if w := e.Value.(*waiter); now.Sub(w.since) >= uploadGrace {
		return w
	}
	return nil
}

// remove takes w off the lists; the caller holds a.mu.
func (a *admission) remove(w *waiter) {
	if w.all == nil {
		return
	}
	a.waiting.Remove(w.all)
	a.addrs[w.addr].waiting.Remove(w.of)
	w.all, w.of = nil, nil
}

// release ends w's wait (its frame is read, or its connection closed),
// and reports whether it was evicted before.
func (a *admission) release(w *waiter) (evicted bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.remove(w)
	return w.evicted
}

// sweep forgets, at most every ten seconds, the addresses with nothing
// waiting and a full burst: they are as if never seen. The caller holds
// a.mu.
func (a *admission) sweep(now time.Time) {
	if now.Sub(a.swept) < 10*time.Second {
		return
	}
	a.swept = now
	for addr, st := range a.addrs {
		if st.waiting.Len() == 0 && st.bucket.TokensAt(now) >= float64(a.lim.Burst) {
			delete(a.addrs, addr)
		}
	}
}

// numWaiting returns the connections waiting in all.
func (a *admission) numWaiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiting.Len()
}
