package server

import (
	"errors"
	"fmt"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// Errors of the additive backend's share intake; the server's error
// wraps them with the report, query and peer concerned.
var (
	// ErrWrongSender refuses an enrolment or shares of an additive report
	// from a peer other than the one that enrolled it: shares forged in a
	// party's name, by the other server or anyone else.
	ErrWrongSender = errors.New("the report was enrolled by another peer")
	// ErrNoBatch refuses shares for a query batch that is not open: never
	// opened, or already answered.
	ErrNoBatch = errors.New("no such open query batch")
	// ErrOtherBatch refuses shares computed for another batch than the
	// one the server registered under their query ID (Shares.Batch is not
	// its OpenQuery.Digest): other prefixes or another component.
	ErrOtherBatch = errors.New("shares computed for another batch")
	// ErrConflictingShares refuses a second, different copy of a report's
	// shares in one batch (an identical copy is acknowledged as a
	// duplicate).
	ErrConflictingShares = errors.New("conflicting second copy of a report's shares")
)

// checkSender checks that peer from may act for report id: it enrolled
// it, or nobody has (the caller holds s.mu).
func checkSender(d *dataset, from transport.PeerID, id payload.ReportID) error {
	if by, ok := d.enrolledBy[id]; ok && by != from {
		return fmt.Errorf("%w (%q)", ErrWrongSender, by)
	}
	return nil
}

// fixedSums returns, for each prefix of m, the sum over the release's
// reports of this server's shares: the one fixed at the first answer of
// (m.Component, prefix) if any, otherwise computed from batch and fixed
// now. So every (release, component, prefix) is answered from one share
// set, however many batches ask for it (see the package doc); the caller
// holds s.mu.
func (rel *release) fixedSums(batch *openQuery, m *protocol.Query) []uint64 {
	if rel.fixed == nil {
		rel.fixed = make(map[payload.Component]map[int]uint64)
	}
	fixed := rel.fixed[m.Component]
	if fixed == nil {
		fixed = make(map[int]uint64, len(m.Prefixes))
		rel.fixed[m.Component] = fixed
	}
	sums := make([]uint64, len(m.Prefixes))
	var fresh []int // positions j of the prefixes answered for the first time
	for j, i := range m.Prefixes {
		var ok bool
		if sums[j], ok = fixed[i]; !ok {
			fresh = append(fresh, j)
		}
	}
	for _, id := range rel.reports {
		shares := batch.shares[id]
		for _, j := range fresh {
			sums[j] += shares[j]
		}
	}
	for _, j := range fresh {
		fixed[m.Prefixes[j]] = sums[j]
	}
	return sums
}
