package deploy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// Sentinel errors for callers to branch on with errors.Is; the error's
// text adds the details. Malformed relayed reports match
// protocol.ErrMalformed, and a server's refusals its sentinels (package
// server) by their wire codes, through protocol.RemoteError.
var (
	// ErrUnsealable: a sealed upload does not open with the server's
	// HPKE key (the helper's for a relayed share, the receiving server's
	// for the sealed transport): it was tampered with, or sealed to
	// another key.
	ErrUnsealable = errcode.New(errcode.Unsealable, "does not open with the server's HPKE key")
	// ErrForgedAck: a server's answer to a sealed upload fails its MAC
	// (keyed by the HPKE context's exported secret, which only the
	// server that opened the upload holds): a party never trusts it and
	// sends the upload again.
	ErrForgedAck = errors.New("acknowledgement fails its MAC")
	// ErrBudgetChanged: the manifest's total budget is not the one the
	// server's store kept its ledger under, and the operator did not
	// accept the change (ServerConfig.AcceptBudgetChange).
	ErrBudgetChanged = errors.New("total budget changed")
	// ErrStoreConfig: the manifest gives the server's stored data
	// another meaning than the one its store was created under (dataset,
	// backend, grid, payload, or the neighbouring relation after a
	// release): the server does not start, and changes nothing stored.
	ErrStoreConfig = errors.New("the manifest differs from the one the store was created under")
	// ErrRelayFailed: in relay mode the leader stored its share of a
	// report but could not deliver the sealed share to the helper.
	ErrRelayFailed = errcode.New(errcode.RelayFailed, "the leader could not relay the sealed share to the helper")
	// ErrUnverifiedStore: the server's store holds a bare DCF key, the
	// upload of a dcf deployment before its reports were verified
	// (manifest version 2), which no verified dataset can count.
	ErrUnverifiedStore = errors.New("the store holds unverified DCF keys")
)

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
