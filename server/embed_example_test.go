package server_test

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// handlers is a transport of the example's own: a call is a direct call
// of the peer's Handle. A networked one carries the same bytes.
type handlers map[core.PeerID]*server.Server

// conn is peer self's view of the transport.
type conn struct {
	self core.PeerID
	to   handlers
}

func (c conn) Self() core.PeerID { return c.self }

func (c conn) Call(ctx context.Context, to core.PeerID, req []byte) ([]byte, error) {
	srv, ok := c.to[to]
	if !ok {
		return nil, fmt.Errorf("no peer %q", to)
	}
	return srv.Handle(ctx, c.self, req), nil
}

// A program embeds the leader and the helper behind a transport of its
// own (any core.Conn, the servers answering with Handle): parties upload
// their verified reports, the leader verifies them with the helper, and
// an analyst reads a private ECDF. (ε is huge here so that the exact
// counts show through the noise.)
func Example_embedded() {
	ctx := context.Background()
	const bins = 4
	ds := []server.Dataset{{Name: "d", Backend: server.DCF, Bins: bins, Budget: mechanism.Budget{Epsilon: 1 << 48}, MinReports: 3}}
	net := handlers{}
	key := [32]byte{7} // shared by the two servers, secret from the parties
	leader, err := server.New(server.Config{Role: server.Leader, Peer: "helper", Conn: conn{"leader", net}, Ledger: server.NewMemoryLedger(), Datasets: ds, VerifyKey: key})
	if err != nil {
		panic(err)
	}
	helper, err := server.New(server.Config{Role: server.Helper, Peer: "leader", Ledger: server.NewMemoryLedger(), Datasets: ds, VerifyKey: key})
	if err != nil {
		panic(err)
	}
	net["leader"], net["helper"] = leader, helper

	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	for k, score := range []float64{0.1, 0.3, 0.6, 0.7, 0.9} {
		p, err := party.New(party.Instance{Score: score}, g)
		if err != nil {
			panic(err)
		}
		to := party.Servers{Conn: conn{core.PeerID(fmt.Sprint("party", k)), net}, Leader: "leader", Helper: "helper", Dataset: "d"}
		if err := p.UploadVerifiedKeys(ctx, to); err != nil {
			panic(err)
		}
	}
	if err := leader.Verify(ctx); err != nil {
		panic(err)
	}

	analyst, _ := remote.New(server.DCF, conn{"analyst", net}, "leader", "d")
	rel, err := analyst.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Bins: bins, Epsilon: 1 << 48}})
	if err != nil {
		panic(err)
	}
	e, err := analysis.QueryECDF(ctx, analyst, rel, g, analysis.AllPrefixes(bins), 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("counts", e.Counts)
	// Output: counts [1 2 4 5]
}
