package deploy

import (
	"log/slog"
	"sync"
	"time"
)

// Limits of the connection-level warnings (connWarn): at most
// connLogBurst lines per client address per connLogWindow, then one
// line per window and address saying how many were suppressed; at most
// connLogAddrs addresses are told apart, the others counted together.
const (
	connLogBurst  = 5
	connLogWindow = 10 * time.Second
	connLogAddrs  = 1024
)

// connLog rate-limits a server's connection-level warnings per client
// address, so that one client dropping connections or sending garbage
// frames cannot flood the log (or fedecdf status's last errors).
type connLog struct {
	mu    sync.Mutex
	addrs map[string]*connLogState
}

// connLogState is the current window of one address.
type connLogState struct {
	logged, suppressed int
	last               string // the message of the last line suppressed
}

// allow reports whether a line about addr may be logged now, and counts
// it as suppressed if not.
func (l *connLog) allow(addr, msg string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs == nil {
		l.addrs = make(map[string]*connLogState)
	}
	st := l.addrs[addr]
	if st == nil {
		if len(l.addrs) >= connLogAddrs {
			addr = "(other addresses)"
			st = l.addrs[addr]
		}
		if st == nil {
			st = &connLogState{}
			l.addrs[addr] = st
		}
	}
	if st.logged < connLogBurst {
		st.logged++
		return true
	}
	st.suppressed++
	st.last = msg
	return false
}

// flush logs, for each address with suppressed lines in the window that
// ends, how many, and starts a new window.
func (l *connLog) flush(log *slog.Logger) {
	l.mu.Lock()
	addrs := l.addrs
	l.addrs = nil
	l.mu.Unlock()
	for addr, st := range addrs {
		if st.suppressed > 0 {
			log.Warn("more connection warnings suppressed", "from", addr, "suppressed", st.suppressed, "last", st.last, "window", connLogWindow.String())
		}
	}
}

// connWarn logs a connection-level warning about the client at addr (an
// admission unit, clientAddr), within the per-address limit of connLog.
func (s *Server) connWarn(addr, msg string, args ...any) {
	if s.connLog.allow(addr, msg) {
		s.log.Warn(msg, args...)
	}
}
