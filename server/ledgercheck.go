package server

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// Restore detection. A server's store holds its ledger; restored from a
// backup taken before a release, the ledger forgets that release, and
// the server would admit its cost again, or create a release of its ID
// anew with fresh noise beside the first: the analyst could average two
// draws. Nothing is refunded, so the number of releases on a ledger
// (ledger.Ledger.Releases) only grows, and both servers charge the same
// releases apart from those the leader holds pending (the helper
// charges before it acknowledges, the leader after it hears the
// acknowledgement; an abort removes only what neither charged). The
// leader therefore sends, in a LedgerCheck, the number of releases it
// has charged outside its pending ones, with their IDs; the helper
// counts its own outside the same IDs; the two counts are equal unless
// one ledger went back in time. The leader checks at every exchange of
// manifest digests (first contact, every peer check, before every
// release) and before the first query of a dataset; on a difference both
// servers refuse to create or answer releases of the dataset
// (ErrLedgerRewound) until a check finds the counts equal again — the
// operator restored the latest state of the store that went back.

// ledgerCount returns the number of releases on d's ledger outside
// pending, the leader's pending releases of d.
func (s *Server) ledgerCount(d *dataset, pending []payload.ReleaseID) (uint64, error) {
	n, err := s.cfg.Ledger.Releases(d.Name)
	if err != nil {
		return 0, err
	}
	for _, id := range pending {
		charged, err := s.cfg.Ledger.Charged(d.Name, id)
		if err != nil {
			return 0, err
		}
		if charged {
			n--
		}
	}
	return n, nil
}

// rewoundError is the error of two ledgers of d whose counts differ.
func (s *Server) rewoundError(d *dataset, leader, helper uint64) error {
	behind, ahead, n, m := "leader", "helper", leader, helper
	if helper < leader {
		behind, ahead, n, m = "helper", "leader", helper, leader
	}
	return fmt.Errorf("dataset %q: %w: the %s's ledger holds %d releases, the %s's %d (outside the releases pending at the leader): the %s's store was restored from an older backup (or replaced), and it has forgotten %d release(s) already charged and answered. Both servers refuse to create or answer releases of the dataset, so that no budget is sold twice and no release is answered with new noise. Stop the %s and restore the latest state of its store (the newest backup, or the database or file it ran on); the servers resume when their ledgers agree again. If that state is lost, retire the dataset: its remaining budget cannot be known", d.Name, ErrLedgerRewound, behind, n, ahead, m, behind, m-n, behind)
}

// checkLedgers compares the ledger of every dataset with the helper's
// (leader only), and returns the first difference.
func (s *Server) checkLedgers(ctx context.Context) error {
	if s.cfg.Role != Leader {
		return nil
	}
	s.mu.Lock()
	names := slices.Sorted(maps.Keys(s.datasets))
	s.mu.Unlock()
	for _, name := range names {
		s.mu.Lock()
		d := s.datasets[name]
		s.mu.Unlock()
		if err := s.checkLedger(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// checkLedger compares the leader's ledger of d with the helper's, and
// records the outcome (d.rewound), which both servers refuse releases
// of d with.
func (s *Server) checkLedger(ctx context.Context, d *dataset) error {
	s.mu.Lock()
	pending := slices.SortedFunc(maps.Keys(d.pending), func(a, b payload.ReleaseID) int { return slices.Compare(a[:], b[:]) })
	n, err := s.ledgerCount(d, pending)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("ledger check of dataset %q: %w", d.Name, err)
	}
	resp, err := protocol.Call[*protocol.LedgerCheck](ctx, s.cfg.Conn, s.cfg.Peer, &protocol.LedgerCheck{Dataset: d.Name, Charged: n, Pending: pending})
	if err != nil {
		return fmt.Errorf("ledger check of dataset %q with the helper: %w", d.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d.rewound = nil
	if resp.Charged != n {
		d.rewound = s.rewoundError(d, n, resp.Charged)
	}
	d.ledgerChecked = d.rewound == nil
	return d.rewound
}

// ledgerCheck answers the leader's LedgerCheck with the helper's count,
// and records whether the two differ.
func (s *Server) ledgerCheck(from transport.PeerID, m *protocol.LedgerCheck) (protocol.Message, error) {
	if err := s.fromLeaderToHelper(from, "ledger check"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, err
	}
	n, err := s.ledgerCount(d, m.Pending)
	if err != nil {
		return nil, fmt.Errorf("helper: ledger check of dataset %q: %w", d.Name, err)
	}
	d.rewound = nil
	if n != m.Charged {
		d.rewound = s.rewoundError(d, m.Charged, n)
	}
	return &protocol.LedgerCheck{Dataset: d.Name, Charged: n}, nil
}

// ledgerAgreed refuses releases of d after a ledger check found the two
// ledgers apart; the caller holds s.mu.
func (d *dataset) ledgerAgreed() error { return d.rewound }

// ledgerCheckedForQuery compares the ledgers of the dataset a query
// names with the helper's (checkLedger), unless a check in this process
// already found them equal (the leader).
func (s *Server) ledgerCheckedForQuery(ctx context.Context, dataset string) error {
	s.mu.Lock()
	d := s.datasets[dataset]
	checked := d == nil || d.ledgerChecked
	s.mu.Unlock()
	if checked {
		return nil
	}
	return s.checkLedger(ctx, d)
}
