package p2p_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// A server answers reports from anyone; a party dials it by the name its
// address book gives the server's pinned peer ID.
func Example() {
	serverKey, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	server, err := p2p.New(p2p.Config{Key: serverKey, Self: "leader", Listen: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")}})
	if err != nil {
		panic(err)
	}
	defer server.Close()
	server.Handle(p2p.ReportProtocol, nil, func(_ context.Context, _ transport.PeerID, req []byte) []byte {
		return append([]byte("ack "), req...)
	})

	partyKey, _, _ := crypto.GenerateEd25519Key(rand.Reader)
	party, err := p2p.New(p2p.Config{Key: partyKey, Peers: map[transport.PeerID]peer.AddrInfo{
		"leader": {ID: server.ID(), Addrs: server.Addrs()},
	}})
	if err != nil {
		panic(err)
	}
	defer party.Close()
	resp, err := party.Conn(p2p.ReportProtocol).Call(context.Background(), "leader", []byte("report 1"))
	fmt.Printf("%s %v\n", resp, err)
	// Output: ack report 1 <nil>
}
