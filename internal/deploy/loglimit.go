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

// repeatedWarns limits the warnings of periodic checks that fail check
// after check (verification not finished, the database not reachable),
// keyed by the warning's message: a failure's warning is logged when it
// starts and whenever its error's text changes, else at most once per
// every, with the number of checks that failed since the last line (it
// included) and for how long it has failed; the first success after
// it logs one INFO line saying it recovered, after how many failed
// checks. The first line of a failure stays in fedecdf status's last
// errors (lastErrors) while it lasts.
type repeatedWarns struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	failing map[string]*repeatedWarn // by message
}

// repeatedWarn is a failure repeatedWarns follows.
type repeatedWarn struct {
	err           string    // the error's text in the last line
	since, logged time.Time // the first failed check; the last line
	unlogged      int       // failed checks since the last line
	failed        int       // failed checks since since
}

// newRepeatedWarns returns the limiter of the warnings logged to log,
// repeated at most every summary (the summary interval; DefaultSummary
// if the summary is off).
func newRepeatedWarns(log *slog.Logger, summary time.Duration) *repeatedWarns {
	if summary <= 0 {
		summary = DefaultSummary
	}
	return &repeatedWarns{log: log, every: summary, now: time.Now}
}

// failed records a check that failed with err: it logs msg at WARN if
// the failure just started, err's text changed or every passed since
// the last line.
func (w *repeatedWarns) failed(msg string, err error) {
	now := w.now()
	w.mu.Lock()
	if w.failing == nil {
		w.failing = make(map[string]*repeatedWarn)
	}
	f := w.failing[msg]
	if f == nil {
		f = &repeatedWarn{since: now}
		w.failing[msg] = f
	}
	f.failed++
	f.unlogged++
	first, text := f.failed == 1, err.Error()
	if !first && text == f.err && now.Sub(f.logged) < w.every {
		w.mu.Unlock()
		return
	}
	n, since := f.unlogged, f.since
	f.err, f.logged, f.unlogged = text, now, 0
	w.mu.Unlock()
	if first {
		w.log.Warn(msg, "err", err)
		return
	}
	w.log.Warn(msg, "err", err, "failed_checks", n, "failing_for", now.Sub(since).String())
}

// check records the outcome err of a check of msg's kind: failed if
// err is not nil, else succeeded, logging recovered if it was failing.
func (w *repeatedWarns) check(msg, recovered string, err error) {
	if err != nil {
		w.failed(msg, err)
		return
	}
	w.succeeded(msg, recovered)
}

// succeeded records a check of msg's kind that succeeded: if it was
// failing, it logs recovered at INFO with the number of failed checks.
func (w *repeatedWarns) succeeded(msg, recovered string) {
	now := w.now()
	w.mu.Lock()
	f := w.failing[msg]
	delete(w.failing, msg)
	w.mu.Unlock()
	if f != nil {
		w.log.Info(recovered, "failed_checks", f.failed, "failing_for", now.Sub(f.since).String())
	}
}
