package server

import (
	"context"
	"errors"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
)

// allComponents are the payload components, in order.
var allComponents = []payload.Component{payload.Count, payload.Label, payload.NotLabel, payload.Probability}

// exactSums queries every prefix of every component of release rel at
// ε = 2^48 (no noise).
func (p *pair) exactSums(t *testing.T, rel payload.ReleaseID) map[payload.Component][]uint64 {
	t.Helper()
	all := make([]int, bins)
	for i := range all {
		all[i] = i + 1
	}
	got := make(map[payload.Component][]uint64)
	for _, c := range allComponents {
		msg := &protocol.Query{Dataset: "d", Release: rel, Component: c, Prefixes: all}
		ans, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "leader", msg)
		if err != nil {
			t.Fatal(err)
		}
		got[c] = ans.Values
	}
	return got
}

// plainSums is Σ_parties payload_c·1[bin ≤ i] at every prefix i of every
// component.
func plainSums(parties []*party.Party) map[payload.Component][]uint64 {
	want := make(map[payload.Component][]uint64)
	for _, c := range allComponents {
		want[c] = make([]uint64, bins)
		for i := range want[c] {
			for _, q := range parties {
				if q.Bin() <= i+1 {
					want[c][i] += q.Payload(c)
				}
			}
		}
	}
	return want
}

// TestFoldedReleaseSubtractsAndAdds: a release over the reports both
// servers hold is exact at every prefix of every component whether a
// server gets it by subtracting its other reports from its aggregate
// (few of them) or by folding the agreed reports afresh (fewer of
// those), and each way walks exactly the keys it needs once more.
func TestFoldedReleaseSubtractsAndAdds(t *testing.T) {
	for _, c := range []struct {
		name                     string
		both, leaderOnly, helper int
		// keys walked again by the leader and by the helper
		leaderRefold, helperRefold int
	}{
		{"all held by both", 4, 0, 0, 0, 0},
		{"subtract at both", 4, 1, 2, 1, 2},
		{"fold afresh at the leader", 1, 3, 0, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPair(t, DCF, 1<<50, 1, nil)
			var agreed []*party.Party
			for j := range c.both {
				agreed = append(agreed, p.upload(t, float64(j)/float64(c.both)+0.01)...)
			}
			for range c.leaderOnly {
				p.uploadTo(t, "leader", 0.3)
			}
			for range c.helper {
				p.uploadTo(t, "helper", 0.6)
			}
			rel, n, err := p.releaseOf(1<<48, allComponents...)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.both {
				t.Fatalf("release over %d reports, want %d", n, c.both)
			}
			got, want := p.exactSums(t, rel), plainSums(agreed)
			for _, comp := range allComponents {
				for i := range want[comp] {
					if got[comp][i] != want[comp][i] {
						t.Fatalf("component %v prefix %d: %d, want %d", comp, i+1, got[comp][i], want[comp][i])
					}
				}
			}
			for _, s := range []struct {
				srv       *Server
				held, add int
			}{{p.leader, c.both + c.leaderOnly, c.leaderRefold}, {p.helper, c.both + c.helper, c.helperRefold}} {
				if e := s.srv.datasets["d"].fold.evaluated; e != s.held+s.add {
					t.Errorf("the %s walked %d keys, want %d held + %d folded again", s.srv.cfg.Role, e, s.held, s.add)
				}
			}
		})
	}
}

// TestQueriesDoNotWalkKeys: re-reading a release, every component and
// prefix, and a second release over the same reports walk no key again:
// each server evaluated every key once, when it accepted it.
func TestQueriesDoNotWalkKeys(t *testing.T) {
	p := newPair(t, DCF, 1<<52, 1, nil)
	parties := p.upload(t, 0.05, 0.2, 0.45, 0.7, 0.95)
	want := plainSums(parties)
	for range 2 {
		rel, _, err := p.releaseOf(1<<48, allComponents...)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			got := p.exactSums(t, rel)
			if got[payload.Label][bins-1] != want[payload.Label][bins-1] {
				t.Fatalf("Label total %d, want %d", got[payload.Label][bins-1], want[payload.Label][bins-1])
			}
		}
	}
	for _, s := range []*Server{p.leader, p.helper} {
		if e := s.datasets["d"].fold.evaluated; e != len(parties) {
			t.Errorf("the %s walked %d keys for 2 releases read 3 times each, want %d (each once)", s.cfg.Role, e, len(parties))
		}
	}
}

// TestNoReportsRefusesRefold: a server that keeps no keys (NoReports)
// answers a release over every report it holds, and refuses one that
// would need a key folded again, saying why.
func TestNoReportsRefusesRefold(t *testing.T) {
	p := newPair(t, DCF, 1<<50, 1, nil)
	p.leader.cfg.Reports, p.helper.cfg.Reports = NoReports, NoReports
	p.upload(t, 0.2, 0.8)
	rel, _, err := p.release(1 << 48)
	if err != nil || p.total(t, rel) != 2 {
		t.Fatalf("release over every report: %v", err)
	}
	p.uploadTo(t, "leader", 0.5)
	if _, _, err := p.release(1 << 48); !errors.Is(err, ErrReportsNotKept) {
		t.Fatalf("release leaving out a report only the leader holds: %v, want ErrReportsNotKept", err)
	}
}

// TestFoldedSharesAddToPlainSums: the two servers' aggregates, folded
// over a full chunk and a pending rest, add up to the plain prefix sums
// of every component.
func TestFoldedSharesAddToPlainSums(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, bins)
	var folds [2]*folded
	for b := range folds {
		var err error
		if folds[b], err = newFolded(bins); err != nil {
			t.Fatal(err)
		}
	}
	var parties []*party.Party
	for k := range foldChunk() + 3 { // one chunk folded on add, 3 pending
		q, err := party.New(party.Instance{Score: float64(k%bins) / bins, Label: k % 2, Probability: float64(k%7) / 7, HasProbability: true}, g)
		if err != nil {
			t.Fatal(err)
		}
		parties = append(parties, q)
		var enc [2][]byte
		if enc[0], enc[1], err = q.DCFKeys(nil); err != nil {
			t.Fatal(err)
		}
		for b, f := range folds {
			key, err := fss.Decode(enc[b])
			if err == nil {
				err = f.add(key)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	want := plainSums(parties)
	for _, f := range folds {
		if err := f.flush(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range allComponents {
		for j := range bins {
			k := j*payload.NumComponents + int(c)
			if got := folds[0].sums[k] + folds[1].sums[k]; got != want[c][j] {
				t.Fatalf("component %v prefix %d: %d, want %d", c, j+1, got, want[c][j])
			}
		}
	}
}
