package server

// Verification, leader: the leader drives the exchange with the helper
// in batches (Verify, exchange) and tells it the verdicts (tell).

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// Verify runs, at the leader, the verification of every verified report
// held and not yet decided, with the helper, in batches, and tells the
// helper every final verdict it has not acknowledged. Releases run it
// first; a deployment may also run it as reports arrive. At the helper
// it does nothing.
func (s *Server) Verify(ctx context.Context) error {
	if s.cfg.Role != Leader {
		return nil
	}
	for _, d := range s.datasets {
		if d.verified == nil {
			continue
		}
		if err := s.verifyDataset(ctx, d, false); err != nil {
			return err
		}
	}
	return nil
}

// verifyDataset is Verify for one dataset; it holds s.verifying. The
// reports the helper does not hold yet are left for a later run, and
// with a PreparationStore those not prepared yet unless all (a release:
// the leader prepares them itself).
func (s *Server) verifyDataset(ctx context.Context, d *dataset, all bool) error {
	s.verifying.Lock()
	defer s.verifying.Unlock()
	missing := make(map[payload.ReportID]bool)
	for {
		queue := s.heldInOrder(d, missing)
		if len(queue) == 0 {
			return s.tellOrWrap(ctx, d)
		}
		for len(queue) > 0 {
			n := min(verifyBatch, len(queue))
			batch, err := s.prepareBatch(d, queue[:n], missing, all)
			queue = queue[n:]
			if err != nil {
				return fmt.Errorf("leader: verifying reports of dataset %q: %w", d.Name, err)
			}
			if len(batch.items) != 0 {
				if err := s.exchange(ctx, d, batch, missing); err != nil {
					return fmt.Errorf("leader: verifying reports of dataset %q: %w", d.Name, err)
				}
			}
			if err := s.tellOrWrap(ctx, d); err != nil {
				return err
			}
		}
	}
}

// tellOrWrap is tell with the error of verifyDataset.
func (s *Server) tellOrWrap(ctx context.Context, d *dataset) error {
	if err := s.tell(ctx, d); err != nil {
		return fmt.Errorf("leader: verifying reports of dataset %q: %w", d.Name, err)
	}
	return nil
}

// heldInOrder returns, in ID order, the reports held at the leader for
// verification, other than those the helper lacks (skip) and those not
// yet durable: sorted once per pass, so that a pass over H held reports
// costs O(H log H), not a sort per batch.
func (s *Server) heldInOrder(d *dataset, skip map[payload.ReportID]bool) []payload.ReportID {
	v := d.verified
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]payload.ReportID, 0, len(v.uploads))
	for id := range v.uploads {
		if !skip[id] && !v.unstored[id] {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, payload.CompareIDs)
	return ids
}

// leaderBatch is the leader's half of one exchange: its items and its
// pending preparations.
type leaderBatch struct {
	items   []protocol.Item
	pending []any                                  // the states of items[j]
	digests map[payload.ReportID][sha256.Size]byte // of the uploads
}

// digest returns the digest of the upload of report id in the batch.
func (b *leaderBatch) digest(id payload.ReportID) ([sha256.Size]byte, bool) {
	d, ok := b.digests[id]
	return d, ok
}

// prepareBatch prepares the reports ids at the leader that are still
// held (an orphan purge may have dropped one since heldInOrder): with a
// PreparationStore, those prepared from their sketches, the others here
// if all, else left for a later run (added to unready).
func (s *Server) prepareBatch(d *dataset, ids []payload.ReportID, unready map[payload.ReportID]bool, all bool) (*leaderBatch, error) {
	v := d.verified
	ups := make([]*protocol.Upload, 0, len(ids))
	s.mu.Lock()
	for _, id := range ids {
		if up, ok := v.uploads[id]; ok && !v.unstored[id] {
			ups = append(ups, up)
		}
	}
	s.mu.Unlock()
	var steps []step
	if v.prep == nil {
		steps = v.scheme.lead(ups)
	} else {
		var err error
		if ups, steps, err = v.prep.lead(ups, unready, all); err != nil {
			return nil, err
		}
	}
	b := &leaderBatch{items: make([]protocol.Item, len(ups)), pending: make([]any, len(ups)), digests: make(map[payload.ReportID][sha256.Size]byte, len(ups))}
	for _, up := range ups {
		b.digests[up.Report] = uploadDigest(up)
	}
	for j, st := range steps {
		b.items[j] = protocol.Item{Report: ups[j].Report, Verdict: verdictOf(st.err)}
		if st.err == nil {
			b.items[j].Message, b.pending[j] = st.msg, st.state
		}
	}
	return b, nil
}

// exchange sends the leader's batch to the helper and decides each
// report from both verdicts: a report the helper rejected, or whose
// verification fails here, is rejected; one the helper does not hold
// stays undecided (added to missing).
func (s *Server) exchange(ctx context.Context, d *dataset, b *leaderBatch, missing map[payload.ReportID]bool) error {
	resp, err := protocol.Call[*protocol.Prepared](ctx, s.cfg.Conn, s.cfg.Peer, &protocol.Prepare{Dataset: d.Name, Items: b.items})
	if err != nil {
		return err
	}
	if len(resp.Items) != len(b.items) {
		return fmt.Errorf("the helper answered %d items for %d reports", len(resp.Items), len(b.items))
	}
	for j, own := range b.items {
		theirs := resp.Items[j]
		switch {
		case theirs.Report != own.Report:
			return fmt.Errorf("the helper answered report %v for report %v", theirs.Report, own.Report)
		case theirs.Verdict == protocol.VerdictMissing:
			missing[own.Report] = true
		}
	}
	verdicts := make([]protocol.Verdict, len(b.items))
	states, answers := make([]any, len(b.items)), make([][]byte, len(b.items))
	for j, theirs := range resp.Items {
		verdicts[j] = firstRejection(b.items[j].Verdict, theirs.Verdict)
		if verdicts[j] == protocol.VerdictOK && !missing[theirs.Report] {
			states[j], answers[j] = b.pending[j], theirs.Message
		}
	}
	outs := d.verified.scheme.conclude(states, answers)
	var final []protocol.Item
	for j, own := range b.items {
		if states[j] != nil {
			verdicts[j] = verdictOf(outs[j].err)
		}
		if !missing[own.Report] {
			final = append(final, decision(own.Report, verdicts[j], outs[j].msg))
		}
	}
	if err := d.verified.save(stageFinal, final, b.digest); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for j, own := range b.items {
		if !missing[own.Report] {
			d.verified.decide(Leader, own.Report, verdicts[j], b.digests[own.Report], outs[j].state, outs[j].msg)
		}
	}
	return nil
}

// decision is the leader's final verdict on report id as it tells the
// helper: with its message for the helper's settle if accepted.
func decision(id payload.ReportID, verdict protocol.Verdict, msg []byte) protocol.Item {
	it := protocol.Item{Report: id, Verdict: verdict}
	if verdict == protocol.VerdictOK {
		it.Message = msg
	}
	return it
}

// tell sends the helper the final verdicts it has not acknowledged.
func (s *Server) tell(ctx context.Context, d *dataset) error {
	s.mu.Lock()
	untold := d.verified.untold
	s.mu.Unlock()
	for start := 0; start < len(untold); start += verifyBatch {
		items := untold[start:min(start+verifyBatch, len(untold))]
		if _, err := protocol.Call[*protocol.Ack](ctx, s.cfg.Conn, s.cfg.Peer, &protocol.Decide{Dataset: d.Name, Items: items}); err != nil {
			s.mu.Lock()
			d.verified.untold = slices.Concat(untold[start:], d.verified.untold[len(untold):])
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Lock()
	d.verified.untold = d.verified.untold[len(untold):]
	s.mu.Unlock()
	return nil
}
