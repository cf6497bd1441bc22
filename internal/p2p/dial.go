package p2p

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"

	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// Causes of a failed dial, wrapped by the *DialError Call returns.
var (
	// ErrConnRefused: nothing listens at the peer's address.
	ErrConnRefused = errcode.New(errcode.ConnRefused, "connection refused")
	// ErrPeerMismatch: something answers at the address, but under
	// another key than the one the address book pins.
	ErrPeerMismatch = errcode.New(errcode.PeerMismatch, "the key at that address is not the expected one")
	// ErrNoRoute: the address cannot be reached from this machine.
	ErrNoRoute = errcode.New(errcode.NoRoute, "no route to the address")
	// ErrDialTimeout: the address did not answer in time (connecting,
	// or with the response of a call).
	ErrDialTimeout = errcode.New(errcode.DialTimeout, "the address did not answer in time")
	// ErrConnReset: the peer accepted the TCP connection and closed it
	// during the handshake, or reset the stream of a call: a server
	// refusing connections from this address (its per-address limits),
	// shutting down or crashing.
	ErrConnReset = errcode.New(errcode.ConnReset, "the connection was reset by the peer")
	// ErrResourceLimit: this host's own resource limits refused the
	// connection or stream.
	ErrResourceLimit = errcode.New(errcode.ResourceLimit, "a resource limit of this host was reached")
)

// DialError is a failed connection to a named peer of the address book,
// with the address tried and the likely cause. It replaces libp2p's
// "all dials failed" error, which shows neither the peer's name nor,
// after a first failure, the cause ("dial backoff").
type DialError struct {
	Peer  transport.PeerID // book name: "leader", "helper"
	Addr  string           // the multiaddr that failed
	Cause error            // ErrConnRefused, ErrPeerMismatch, ErrNoRoute, ErrDialTimeout, ErrConnReset or ErrResourceLimit
	Err   error            // libp2p's error for that address
}

func (e *DialError) Error() string {
	return fmt.Sprintf("p2p: %s at %s: %v: %s", e.Peer, e.Addr, e.Cause, e.hint())
}

// Unwrap returns the cause and libp2p's error.
func (e *DialError) Unwrap() []error { return []error{e.Cause, e.Err} }

// Is reports that a failed dial matches transport.ErrNotDelivered: no
// request was sent.
func (e *DialError) Is(target error) bool { return target == transport.ErrNotDelivered }

// hint says what to do about e.
func (e *DialError) hint() string {
	server := e.Peer == "leader" || e.Peer == "helper"
	switch e.Cause {
	case ErrConnRefused:
		if server {
			return fmt.Sprintf("is `fedecdf server --role %s` running and listening there? Start it, or fix the %s's address in the manifest", e.Peer, e.Peer)
		}
		return fmt.Sprintf("is %s running and listening there?", e.Peer)
	case ErrPeerMismatch:
		var m sec.ErrPeerIDMismatch
		got := ""
		if errors.As(e.Err, &m) {
			got = fmt.Sprintf(" (the manifest pins %s, the server there has %s)", m.Expected, m.Actual)
		}
		if server {
			return fmt.Sprintf("the server there does not hold the manifest's %s key%s: start it with the %s's key, or regenerate the manifest from the keys in use", e.Peer, got, e.Peer)
		}
		return fmt.Sprintf("the peer there is not the address book's %s%s", e.Peer, got)
	case ErrNoRoute:
		return "check the address in the manifest and the network between the two machines"
	case ErrConnReset:
		if server {
			return fmt.Sprintf("the %s refused the connection during the handshake: if many parties share this address (a NAT), its operator should raise `fedecdf server --conns-per-address/--conn-rate/--conn-burst` (its log says \"refused a connection\"); otherwise it is restarting: retry later", e.Peer)
		}
		return "the peer closed the connection during the handshake: it may be limiting connections from this address, or restarting"
	case ErrResourceLimit:
		return "this process has too many connections or streams open: lower --concurrency"
	case ErrDialTimeout:
		if server {
			return fmt.Sprintf("the %s accepted no connection in time: it may be stopped or overloaded (is `fedecdf server --role %s` running and answering?); if it runs, check its address in the manifest and the firewall between the two machines", e.Peer, e.Peer)
		}
		return "the peer accepted no connection in time: it may be stopped or overloaded; if it runs, check its address and the firewall"
	default:
		return "is the address right, and does a firewall drop the connection?"
	}
}

// Every cause above comes typed through go-libp2p v0.51's error chain
// (swarm.DialError → swarm.TransportError → net.OpError or
// sec.ErrPeerIDMismatch), so no error text is matched.

// explainDial turns libp2p's dial failure err for peer to into a
// *DialError naming the cause, or returns nil when err is no dial failure
// or its cause is none of the known ones.
func explainDial(to transport.PeerID, err error) error {
	var de *swarm.DialError
	if !errors.As(err, &de) {
		return nil
	}
	// One address's cause is enough; a mismatch outranks the others (it
	// proves the address is right and the key wrong).
	var found *DialError
	for _, te := range de.DialErrors {
		cause := dialCause(te.Cause)
		if cause == nil {
			continue
		}
		d := &DialError{Peer: to, Addr: te.Address.String(), Cause: cause, Err: te.Cause}
		if found == nil || cause == ErrPeerMismatch {
			found = d
		}
	}
	if found == nil {
		return nil
	}
	return found
}

// dialCause classifies the error of dialing one address.
func dialCause(err error) error {
	var m sec.ErrPeerIDMismatch
	switch {
	case errors.As(err, &m):
		return ErrPeerMismatch
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrConnRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ErrNoRoute
	}
	return streamCause(err)
}

// streamCause classifies the failure of a handshake or of a stream:
// a resource limit, a timeout, or a reset (or an end of stream where a
// frame was due).
func streamCause(err error) error {
	switch {
	case errors.Is(err, network.ErrResourceLimitExceeded):
		return ErrResourceLimit
	// A call's own deadline resets its stream: the timeout is the cause.
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, swarm.ErrDialTimeout), os.IsTimeout(err):
		return ErrDialTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, network.ErrReset),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrConnReset
	}
	return nil
}

// explainStream wraps err, a failure of call's stream to peer to after
// the connection was made, with its cause when known.
func explainStream(to transport.PeerID, what string, err error) error {
	cause := streamCause(err)
	if cause == ErrDialTimeout && strings.HasPrefix(what, "opening") {
		// Connected or not, the peer never completed the stream: the
		// hint of a dial that timed out applies.
		return fmt.Errorf("p2p: %s %s: %w: %w: %s", what, to, cause, err, (&DialError{Peer: to, Cause: cause}).hint())
	}
	if cause != nil {
		return fmt.Errorf("p2p: %s %s: %w: %w", what, to, cause, err)
	}
	return fmt.Errorf("p2p: %s %s: %w", what, to, err)
}
