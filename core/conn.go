package core

import "context"

// PeerID names a participant: a server ("leader", "helper"), an analyst
// or a party.
type PeerID string

// Conn is one participant's view of the network: the seam between the
// protocol logic and a transport. Messages are opaque, already-encoded
// byte strings; a server answers them with server.Server.Handle.
type Conn interface {
	// Self is the caller's own peer ID.
	Self() PeerID
	// Call sends req to peer to and returns its response.
	Call(ctx context.Context, to PeerID, req []byte) ([]byte, error)
}
