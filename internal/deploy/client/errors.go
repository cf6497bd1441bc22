package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// ErrForgedAck: a server's answer to a sealed upload fails its MAC
// (keyed by the HPKE context's exported secret, which only the
// server that opened the upload holds): a party never trusts it and
// sends the upload again.
var ErrForgedAck = errors.New("acknowledgement fails its MAC")

// Held is the set of servers that acknowledged (durably stored) a
// report.
type Held uint8

// The servers of a Held set.
const (
	HeldByLeader Held = 1 << iota
	HeldByHelper
	HeldByBoth = HeldByLeader | HeldByHelper
)

// String names the servers of h: "both servers", "the leader only",
// "the helper only" or "neither server".
func (h Held) String() string {
	switch h {
	case HeldByBoth:
		return "both servers"
	case HeldByLeader:
		return "the leader only"
	case HeldByHelper:
		return "the helper only"
	}
	return "neither server"
}

// ServerError is the failure of one server's upload.
type ServerError struct {
	Server transport.PeerID // LeaderName or HelperName
	Err    error
}

// DialError is a party's failed connection to a server's upload_addr
// (the sealed transport): the server is not running, or not listening
// for sealed uploads there, or the manifest's address is wrong.
type DialError struct {
	Server transport.PeerID // LeaderName or HelperName
	Err    error            // the dial's error (p2p.ErrConnRefused, a timeout, …)
}

func (e *DialError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *DialError) Unwrap() error { return e.Err }

// UploadError is a direct upload that not both servers acknowledged,
// after each retried for the transport's retry window: which servers
// hold the report and why the others failed (each error names its
// cause, p2p.ErrConnRefused, p2p.ErrConnReset, … or the server's
// refusal). Sending the report again completes it: the server that
// holds it drops the duplicate.
type UploadError struct {
	Report payload.ReportID
	Held   Held          // the servers that acknowledged it
	Failed []ServerError // the others
}

func (e *UploadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "report %v acknowledged by %v", e.Report, e.Held)
	for _, f := range e.Failed {
		fmt.Fprintf(&b, "; upload to the %s: %v", f.Server, f.Err)
	}
	return b.String()
}

// Unwrap returns the servers' errors.
func (e *UploadError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for k, f := range e.Failed {
		errs[k] = f.Err
	}
	return errs
}
