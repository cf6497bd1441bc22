package server

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// spec returns a Count release's mechanism over the test grid.
func spec(name string, epsilon, delta float64, r mechanism.Relation) mechanism.Params {
	return mechanism.Params{Name: name, Bins: bins, Epsilon: epsilon, Delta: delta, Relation: r}
}

// recorded counts the releases a server holds and has stored.
func recorded(t *testing.T, s *Server) (held, stored int) {
	t.Helper()
	err := s.cfg.Releases.LoadReleases("d", func(payload.ReleaseID, []byte) error { stored++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.datasets["d"].releases), stored
}

// TestPolicyRefusedAtBothServers plays a curious analyst asking the
// leader, and a corrupt leader asking the helper directly, for a release
// outside the dataset's policy: under another neighbouring relation (an
// add/remove release at ε is up to 2ε-DP under replace-one, yet was
// charged ε), with a mechanism the dataset does not allow, with δ > 0 on
// a pure dataset or above its maximum δ, or above its maximum ε. Each
// server refuses it on its own (ErrPolicy) before anything is charged or
// recorded; the release the policy allows goes through.
func TestPolicyRefusedAtBothServers(t *testing.T) {
	const (
		replace   = mechanism.ReplaceOne
		addRemove = mechanism.AddRemove
	)
	for _, c := range []struct {
		name             string
		policy           Policy
		allowed, refused mechanism.Params
	}{
		{"add/remove on a replace-one dataset", Policy{}, spec("tree", 1, 0, replace), spec("tree", 1, 0, addRemove)},
		{"replace-one on an add/remove dataset", Policy{Relation: addRemove}, spec("kary", 1, 0, addRemove), spec("kary", 1, 0, replace)},
		{"a mechanism not allowed", Policy{Mechanisms: []string{"tree"}}, spec("tree", 1, 0, replace), spec("kary", 1, 0, replace)},
		{"auto when only named mechanisms are allowed", Policy{Mechanisms: []string{"tree", "kary"}}, spec("kary", 1, 0, replace), spec("auto", 1, 0, replace)},
		{"δ > 0 on a pure dataset", Policy{}, spec("kary", 1, 0, replace), spec("kary", 1, 1e-6, replace)},
		{"δ above the maximum", Policy{Mechanisms: []string{"cascade"}, MaxDelta: 1e-6}, spec("cascade", 1, 1e-6, replace), spec("cascade", 1, 1e-5, replace)},
		{"ε above the maximum", Policy{MaxEpsilon: 1}, spec("tree", 1, 0, replace), spec("tree", 1.5, 0, replace)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			p := newPairOf(t, Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 10, Delta: 0.1}, Policy: c.policy, MinReports: 1}, nil)
			report := p.upload(t, 0.4)[0].ReportID()
			ids := []payload.ReportID{report}
			rel, _ := payload.NewID()
			// As the leader would forward it: the helper holds the same
			// report set, so nothing but the policy stands in the way.
			m := &protocol.CreateRelease{Dataset: "d", Release: rel, Mechanism: c.refused, Components: []payload.Component{payload.Count}, Reports: 1, Digest: payload.Digest(ids)}
			if _, err := p.helper.createRelease(ctx, "leader", m); !errors.Is(err, ErrPolicy) {
				t.Errorf("the helper, asked by the leader: %v, want a refusal wrapping ErrPolicy", err)
			}
			if _, err := p.leader.createRelease(ctx, "analyst", m); !errors.Is(err, ErrPolicy) {
				t.Errorf("the leader, asked by an analyst: %v, want a refusal wrapping ErrPolicy", err)
			}
			if _, err := protocol.Call[*protocol.ReleaseCreated](ctx, p.net.Conn("analyst"), "leader", m); !errors.Is(err, ErrPolicy) {
				t.Errorf("the analyst's request over the wire: %v, want the policy refusal", err)
			}
			for _, s := range []*Server{p.leader, p.helper} {
				if spent, _ := s.cfg.Ledger.Spent("d"); spent != (ledger.Budget{}) {
					t.Errorf("%s charged %+v for a refused release", s.cfg.Role, spent)
				}
				if held, stored := recorded(t, s); held+stored != 0 {
					t.Errorf("%s holds %d and stored %d releases after refusing", s.cfg.Role, held, stored)
				}
			}
			m = &protocol.CreateRelease{Dataset: "d", Release: rel, Mechanism: c.allowed, Components: []payload.Component{payload.Count}}
			if _, err := protocol.Call[*protocol.ReleaseCreated](ctx, p.net.Conn("analyst"), "leader", m); err != nil {
				t.Fatalf("the release the policy allows: %v", err)
			}
			for _, s := range []*Server{p.leader, p.helper} {
				if spent, _ := s.cfg.Ledger.Spent("d"); spent != (ledger.Budget{Epsilon: c.allowed.Epsilon, Delta: c.allowed.Delta}) {
					t.Errorf("%s spent %+v on the allowed release, want its spec", s.cfg.Role, spent)
				}
			}
		})
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, c := range []struct {
		name   string
		policy Policy
		want   string // "" if valid
	}{
		{"zero", Policy{}, ""},
		{"add/remove, every mechanism, δ and ε bounds", Policy{Relation: mechanism.AddRemove, Mechanisms: mechanism.Names, MaxDelta: 1e-6, MaxEpsilon: 2}, ""},
		{"approximate mechanisms with δ allowed", Policy{Mechanisms: []string{"cascade", "gaussian-tree"}, MaxDelta: 1e-9}, ""},
		{"unknown relation", Policy{Relation: 7}, "unknown neighbouring relation"},
		{"unknown mechanism", Policy{Mechanisms: []string{"tree", "laplace"}}, `unknown mechanism "laplace"`},
		{"negative maximum δ", Policy{MaxDelta: -1e-9}, "maximum δ"},
		{"maximum δ of 1", Policy{MaxDelta: 1}, "maximum δ"},
		{"NaN maximum ε", Policy{MaxEpsilon: math.NaN()}, "maximum ε"},
		{"only approximate mechanisms, pure only", Policy{Mechanisms: []string{"cascade", "gaussian-tree"}}, "need δ > 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.Validate()
			if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate: %v, want %q", err, c.want)
			}
			ds := Dataset{Name: "d", Backend: DCF, Unverified: true, Bins: bins, Budget: ledger.Budget{Epsilon: 1}, Policy: c.policy, MinReports: 1}
			_, err = New(Config{Role: Helper, Peer: "leader", Ledger: ledger.NewMemory(), Datasets: []Dataset{ds}})
			if (err == nil) != (c.want == "") {
				t.Fatalf("New with the policy: %v, want %q", err, c.want)
			}
		})
	}
}
