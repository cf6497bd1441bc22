package remote_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

const bins = 8

// deployment starts a leader and a helper of one dcf dataset on an
// in-process network, with one report per score, and returns the
// network and the analyst's client.
func deployment(t *testing.T, scores ...float64) (*transport.Network, *remote.Client, [2]ledger.Ledger) {
	t.Helper()
	net := transport.NewNetwork()
	ds := []server.Dataset{{Name: "d", Backend: server.DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 1 << 41}, MinReports: 1}}
	ledgers := [2]ledger.Ledger{ledger.NewMemory(), ledger.NewMemory()}
	for i, role := range []server.Role{server.Leader, server.Helper} {
		self, peer := transport.PeerID("leader"), transport.PeerID("helper")
		if role == server.Helper {
			self, peer = peer, self
		}
		s, err := server.New(server.Config{Role: role, Peer: peer, Conn: net.Conn(self), Ledger: ledgers[i], Datasets: ds})
		if err != nil {
			t.Fatal(err)
		}
		net.Register(self, s.Handle)
	}
	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	for _, x := range scores {
		p, err := party.New(party.Instance{Score: x, Label: 1}, g)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.UploadKeys(context.Background(), party.Servers{Conn: net.Conn("party"), Leader: "leader", Helper: "helper", Dataset: "d"}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := remote.New(server.DCF, net.Conn("analyst"), "leader", "d")
	if err != nil {
		t.Fatal(err)
	}
	return net, c, ledgers
}

// loseFirst loses the first call from → to of message kind k, as fault.
func loseFirst(from, to transport.PeerID, k protocol.Kind, fault transport.Fault) transport.Faults {
	lost := false
	return func(f, t transport.PeerID, req []byte) transport.Fault {
		if lost || f != from || t != to || protocol.Kind(req[1]) != k {
			return transport.Deliver
		}
		lost = true
		return fault
	}
}

// TestReadCompletesACutOffRelease: an analyst whose release was cut off
// — the helper's acknowledgement to the leader lost, or the leader's
// reply to the analyst — gets an error naming the release ID, and
// reading that release by its ID (OpenRelease) completes it
// and returns its counts, charged once at both servers.
func TestReadCompletesACutOffRelease(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults transport.Faults
	}{
		{"the helper's acknowledgement lost", loseFirst("leader", "helper", protocol.KindCreateRelease, transport.LoseResponse)},
		{"the leader's reply lost", loseFirst("analyst", "leader", protocol.KindCreateRelease, transport.LoseResponse)},
	} {
		t.Run(c.name, func(t *testing.T) {
			net, client, ledgers := deployment(t, 0.1, 0.6, 0.9)
			net.SetFaults(c.faults)
			spec := aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1 << 40}}
			_, err := client.NewRelease(context.Background(), spec)
			if err == nil {
				t.Fatal("the release succeeded despite the lost message")
			}
			i := strings.Index(err.Error(), "release ")
			if i < 0 || len(err.Error()) < i+8+32 {
				t.Fatalf("the error names no release: %v", err)
			}
			var id payload.ReleaseID
			if _, perr := hex.Decode(id[:], []byte(err.Error()[i+8:i+8+32])); perr != nil {
				t.Fatalf("the error names no release ID (%v): %v", perr, err)
			}
			var rerr *remote.ReleaseError
			if !errors.As(err, &rerr) || rerr.Release != id || !rerr.Unsure() {
				t.Fatalf("%v: not an unsure *remote.ReleaseError of release %v", err, id)
			}
			net.SetFaults(nil)
			rel, err := client.OpenRelease(context.Background(), id, []core.Component{core.Count})
			if err != nil {
				t.Fatalf("reading release %v by its ID: %v", id, err)
			}
			res, err := client.Sum(context.Background(), aggregation.Query{Release: rel, Component: core.Count, Prefixes: []int{bins}})
			if err != nil || res.Sums[0] != 3 {
				t.Fatalf("release %v: total %+v, %v; want 3", id, res, err)
			}
			for _, l := range ledgers {
				if spent, _ := l.Spent("d"); spent.Epsilon != 1<<40 {
					t.Errorf("a server spent ε=%g, want one charge of 2^40", spent.Epsilon)
				}
			}
		})
	}
}
