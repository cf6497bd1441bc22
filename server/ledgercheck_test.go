package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// TestLedgerRewound: a server whose store is restored from a backup
// taken before a release (its ledger and release records as they were)
// is found out at first contact by the ledger check; both servers then
// refuse to create or answer releases of the dataset — a new one, the
// forgotten one again (which would draw new noise beside the first), a
// query of an old one — with nothing charged anywhere, until the latest
// state is restored. Then both answer as before.
func TestLedgerRewound(t *testing.T) {
	for _, behind := range []Role{Leader, Helper} {
		t.Run(behind.String(), func(t *testing.T) {
			p := newPair(t, DCF, 10, 1, nil)
			parties := p.upload(t, 0.1, 0.5, 0.9)
			old, _, err := p.release(1)
			if err != nil {
				t.Fatal(err)
			}
			oldAnswer := p.noisyPrefixes(t, old)
			restored := func() *Server { // the server restored, as now
				if behind == Helper {
					return p.helper
				}
				return p.leader
			}
			s := restored()
			// The backup: the ledger and records as they are now.
			backupLedger, backupReleases := ledger.NewMemory(), newMemoryReleases()
			copyState(t, s, backupLedger, backupReleases)
			forgotten := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0xf0}, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 2}, Components: []payload.Component{payload.Count}}
			if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", forgotten); err != nil {
				t.Fatal(err)
			}
			latestLedger, latestReleases := s.cfg.Ledger, s.cfg.Releases

			// Restored from the backup and restarted.
			s.cfg.Ledger, s.cfg.Releases = backupLedger, backupReleases
			p.restart(t, parties)
			err = p.leader.CheckPeer(context.Background())
			if !errors.Is(err, ErrLedgerRewound) || !strings.Contains(err.Error(), "the "+behind.String()+"'s store was restored") {
				t.Fatalf("first contact with the %s restored: %v, want %v naming it", behind, err, ErrLedgerRewound)
			}
			spent := [2]ledger.Budget{}
			for i, srv := range []*Server{p.leader, p.helper} {
				spent[i], _ = srv.cfg.Ledger.Spent("d")
			}
			if _, _, err := p.release(1); !errors.Is(err, ErrLedgerRewound) {
				t.Errorf("new release: %v, want %v", err, ErrLedgerRewound)
			}
			if _, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.net.Conn("analyst"), "leader", forgotten); !errors.Is(err, ErrLedgerRewound) {
				t.Errorf("the forgotten release again: %v, want %v", err, ErrLedgerRewound)
			}
			query := &protocol.Query{Dataset: "d", Release: old, Component: payload.Count, Prefixes: []int{1, 2}}
			if _, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("analyst"), "leader", query); !errors.Is(err, ErrLedgerRewound) {
				t.Errorf("query of an old release: %v, want %v", err, ErrLedgerRewound)
			}
			if _, err := protocol.Call[*protocol.Answer](context.Background(), p.net.Conn("leader"), "helper", query); !errors.Is(err, ErrLedgerRewound) {
				t.Errorf("query at the helper: %v, want %v", err, ErrLedgerRewound)
			}
			if _, err := p.askHelper(forgotten); !errors.Is(err, ErrLedgerRewound) {
				t.Errorf("release at the helper: %v, want %v", err, ErrLedgerRewound)
			}
			for i, srv := range []*Server{p.leader, p.helper} {
				if now, _ := srv.cfg.Ledger.Spent("d"); now != spent[i] {
					t.Errorf("%s spent %+v while refusing, had %+v", srv.cfg.Role, now, spent[i])
				}
			}

			// The operator restores the latest state: both serve again,
			// the old release with its noise.
			s = restored()
			s.cfg.Ledger, s.cfg.Releases = latestLedger, latestReleases
			p.restart(t, parties)
			if err := p.leader.CheckPeer(context.Background()); err != nil {
				t.Fatalf("latest state restored: %v", err)
			}
			if got := p.noisyPrefixes(t, old); !slices.Equal(got, oldAnswer) {
				t.Errorf("old release answered %v after the restore, %v before", got, oldAnswer)
			}
			if _, _, err := p.release(1); err != nil {
				t.Errorf("new release after the restore: %v", err)
			}
		})
	}
}

// TestLedgerCheckPending: a release the helper charged while the leader
// holds it pending (its acknowledgement lost) is no difference: the
// leader completes it.
func TestLedgerCheckPending(t *testing.T) {
	p := newPair(t, DCF, 10, 1, nil)
	parties := p.upload(t, 0.1, 0.5, 0.9)
	create := &protocol.CreateRelease{Dataset: "d", Release: payload.ReleaseID{0x5e}, Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1}, Components: []payload.Component{payload.Count}}
	if err := p.leader.cfg.Releases.SaveRelease("d", create.Release, marshalPending(create)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.askHelper(create); err != nil { // the helper charges; the leader never hears
		t.Fatal(err)
	}
	p.restart(t, parties) // the leader loads its pending record
	if err := p.leader.CheckPeer(context.Background()); err != nil {
		t.Fatalf("a release pending at the leader, charged at the helper: %v", err)
	}
	if err := p.leader.ResolvePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := p.leader.cfg.Ledger.Releases("d"); n != 1 {
		t.Errorf("the leader's ledger holds %d releases after resolving, want 1", n)
	}
}

// copyState copies s's ledger of "d" (its charges at their costs are
// not known apart, so the whole spending as one charge per release is
// not possible: it copies each release with the spending on the first)
// and its release records into l and r.
func copyState(t *testing.T, s *Server, l *ledger.Memory, r *memoryReleases) {
	t.Helper()
	err := s.cfg.Releases.LoadReleases("d", func(id payload.ReleaseID, rec []byte) error {
		return r.SaveRelease("d", id, rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	spent, _ := s.cfg.Ledger.Spent("d")
	first := true
	for id := range r.records["d"] {
		cost := ledger.Budget{}
		if first {
			cost, first = spent, false
		}
		if err := l.Charge("d", id, cost, ledger.Budget{Epsilon: 100}); err != nil {
			t.Fatal(err)
		}
	}
}
