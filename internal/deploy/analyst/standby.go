package analyst

// Standby processes: a leader process standing by on a shared
// PostgreSQL store may answer an analyst's reads of existing releases
// (its --query-listen address); it refuses anything else with
// protocol.ErrStandby, and the analyst asks the coordinating process
// instead, once, at the manifest's addresses of the leader (on which
// only the coordinator listens).

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// NewAnalystAt is NewAnalyst asking the leader process at first (a
// standby's query address) before the manifest's leader addresses: a
// request first refuses with protocol.ErrStandby goes, once, to the
// coordinating process at the manifest's addresses.
func NewAnalystAt(m *manifest.Manifest, id *manifest.Identity, tc p2p.Config, first []ma.Multiaddr) (*Analyst, error) {
	a, err := NewAnalyst(m, id, tc)
	if err != nil || len(first) == 0 {
		return a, err
	}
	at, err := leaderAt(m, first)
	if err != nil {
		a.Close()
		return nil, err
	}
	tc.Key, tc.Peers, tc.Listen = id.Key, at, nil
	if tc.MaxMessage == 0 {
		tc.MaxMessage = protocol.MaxMessageSize
	}
	h, err := p2p.New(tc)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("analyst: the host for leader process %v: %w", first, err)
	}
	conn := &failover{first: h.Conn(p2p.QueryProtocol), coordinator: a.host.Conn(p2p.QueryProtocol)}
	client, err := remote.New(server.Backend(m.Backend), conn, manifest.LeaderName, m.Dataset)
	if err != nil {
		h.Close()
		a.Close()
		return nil, err
	}
	a.remote, a.first, a.failover = client, h, conn
	a.draws = analysis.DefaultIntervalDraws
	return a, nil
}

// leaderAt is m's address book with the leader at the addresses of
// first (multiaddrs of a leader process, each with the leader's peer ID
// or none) instead of the manifest's; m's book if first is empty.
func leaderAt(m *manifest.Manifest, first []ma.Multiaddr) (map[transport.PeerID]peer.AddrInfo, error) {
	book, err := m.Book(false)
	if err != nil || len(first) == 0 {
		return book, err
	}
	leader := book[manifest.LeaderName]
	addrs := make([]ma.Multiaddr, 0, len(first))
	for _, f := range first {
		addr, id := peer.SplitAddr(f)
		if id != "" && id != leader.ID {
			return nil, fmt.Errorf("analyst: leader process %v: peer ID %s is not the leader's %s", f, id, leader.ID)
		}
		addrs = append(addrs, addr)
	}
	at := make(map[transport.PeerID]peer.AddrInfo, len(book))
	for name, info := range book {
		at[name] = info
	}
	at[manifest.LeaderName] = peer.AddrInfo{ID: leader.ID, Addrs: addrs}
	return at, nil
}

// failover calls first, and the coordinator instead when first refuses
// with protocol.ErrStandby.
type failover struct {
	first, coordinator transport.Conn
	mu                 sync.Mutex
	redirected         int
}

// Self is the analyst's peer ID.
func (f *failover) Self() transport.PeerID { return f.first.Self() }

// Call sends req to the first process, and again to the coordinator if
// that one stands by and refuses it.
func (f *failover) Call(ctx context.Context, to transport.PeerID, req []byte) ([]byte, error) {
	resp, err := f.first.Call(ctx, to, req)
	if err != nil || !standbyRefusal(resp) {
		return resp, err
	}
	f.mu.Lock()
	f.redirected++
	f.mu.Unlock()
	return f.coordinator.Call(ctx, to, req)
}

// standbyRefusal reports whether resp refuses with protocol.ErrStandby.
func standbyRefusal(resp []byte) bool {
	msg, err := protocol.Decode(resp)
	if err != nil {
		return false
	}
	e, ok := msg.(*protocol.Error)
	return ok && errors.Is(e.Remote(""), protocol.ErrStandby)
}

// Redirected is how many requests the first leader process refused as a
// standby and the analyst sent to the coordinator instead (0 without
// NewAnalystAt).
func (a *Analyst) Redirected() int {
	if a.failover == nil {
		return 0
	}
	a.failover.mu.Lock()
	defer a.failover.mu.Unlock()
	return a.failover.redirected
}
