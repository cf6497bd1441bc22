// Package p2p carries fedecdf protocol messages between libp2p hosts: it
// implements transport.Conn (Call) and registers transport.Handler
// functions, so the party, server and analyst logic runs unchanged over
// the network (ARCHITECTURE.md, "Data flow").
//
// Every host has an Ed25519 identity; connections are TCP secured by the
// Noise XX handshake (which authenticates the remote peer ID) and
// multiplexed by yamux. Nothing reaches beyond the given addresses: no
// circuit relay, NAT port mapping, hole punching, mDNS or DHT, and a
// connection gater lets a host dial only the peers of its address book
// (the deployment manifest).
//
// One call is one stream of a versioned protocol (ReportProtocol,
// QueryProtocol, PeerProtocol, and RelayProtocol and SealedProtocol for
// reports relayed through the leader) carrying one request frame and one
// response frame:
//
//	version (1 byte, FrameVersion) | kind (1 byte) | length (uint32, big-endian) | payload
//
// with the length capped (Config.MaxMessage) before anything is
// allocated. A handler may be restricted to named peers of the address
// book; a stream from any other peer is answered by a refusal frame,
// which Call returns as a RefusedError without retrying. A failed dial
// is a DialError naming the peer, the address and the cause read from
// libp2p's typed errors (ErrConnRefused, ErrPeerMismatch, ErrNoRoute,
// ErrDialTimeout, ErrConnReset, ErrResourceLimit) with what to do; a
// failure after connecting wraps ErrConnReset or ErrDialTimeout; a wrong
// key is not retried, nor, under Config.StopUnanswered (the servers'
// calls to each other), a stream not opened within the connect timeout:
// the peer is not answering. Other failures are retried, Config.Attempts times
// or for Config.RetryWindow (a party rides out a server restart), with
// exponential backoff and jitter, each attempt under its own timeout
// and dialling anew (libp2p's dial backoff is cleared and bypassed); a
// retry may deliver a request twice, so the protocol's handlers are
// idempotent (reports are keyed by report ID and duplicates dropped).
//
// A listening host limits inbound connections per remote address (one
// IPv4 address or IPv6 /56: concurrent connections, and new ones per
// second after a burst) and in all (Limits), logging what it refuses.
// go-libp2p's defaults, made for peer-to-peer nodes, would refuse most
// parties behind one NAT address; loopback is never limited.
//
// The DP guarantee does not depend on this package: it protects the
// parties' data in transit and pins who may ask the servers for
// releases (only the analysts of the manifest) and who may drive the
// helper (only the leader).
package p2p
