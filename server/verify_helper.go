package server

// Verification, helper: the helper answers the leader's batches
// (prepared) and records the verdicts it is told (decided).

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// verifiedDataset returns the verified dataset a verification message
// from the leader names; the caller holds s.mu.
func (s *Server) verifiedDataset(name string) (*dataset, error) {
	d, err := s.dataset(name)
	if err != nil {
		return nil, err
	}
	if d.verified == nil {
		return nil, fmt.Errorf("%s: dataset %q uses the %s backend: no verification", s.cfg.Role, d.Name, d.Backend)
	}
	return d, nil
}

// prepared answers the leader's Prepare at the helper: for each report,
// its own verdict — from both verifier messages — and message; a report
// it already answered for gets the same answer again, one it decided
// finally VerdictReplay if accepted (it counted already), one it lacks
// VerdictMissing. Nothing counts before the leader's Decide. The
// verification runs outside s.mu.
func (s *Server) prepared(m *protocol.Prepare) (protocol.Message, error) {
	s.mu.Lock()
	d, err := s.verifiedDataset(m.Dataset)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	v := d.verified
	resp := &protocol.Prepared{Items: make([]protocol.Item, len(m.Items))}
	todo := make(map[int]*protocol.Upload)
	for j, theirs := range m.Items {
		if up := v.known(theirs.Report, &resp.Items[j]); up != nil {
			todo[j] = up
		}
	}
	s.mu.Unlock()
	sketches, err := v.sketchesOf(todo)
	if err != nil {
		return nil, fmt.Errorf("helper: %w", err) // the leader names the dataset
	}
	fresh := v.prepareHelper(todo, m.Items, sketches)
	s.mu.Lock()
	defer s.mu.Unlock()
	var kept []protocol.Item
	for j, t := range fresh {
		if _, held := v.uploads[t.item.Report]; held {
			var msg []byte
			if t.item.Verdict == protocol.VerdictOK {
				msg = v.scheme.kept(m.Items[j].Message, t.item.Message)
			}
			kept = append(kept, decision(t.item.Report, t.item.Verdict, msg))
		}
	}
	if err := v.save(stageTentative, kept, v.tentativeOf(fresh)); err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	for j, t := range fresh {
		if _, held := v.uploads[t.item.Report]; held {
			v.tentative[t.item.Report] = t
		}
		resp.Items[j] = t.item
	}
	return resp, nil
}

// known sets the helper's answer for report id if it has one already,
// and otherwise returns its upload, to prepare; the caller holds s.mu.
func (v *verified) known(id payload.ReportID, answer *protocol.Item) *protocol.Upload {
	if verdict, ok := v.verdict(id); ok {
		if verdict == protocol.VerdictOK {
			verdict = protocol.VerdictReplay
		}
		*answer = protocol.Item{Report: id, Verdict: verdict}
		return nil
	}
	if t, ok := v.tentative[id]; ok {
		*answer = t.item
		return nil
	}
	up, ok := v.uploads[id]
	if !ok || v.unstored[id] {
		*answer = protocol.Item{Report: id, Verdict: protocol.VerdictMissing}
		return nil
	}
	return up
}

// sketchesOf returns, with a PreparationStore, the sketches of the
// uploads todo, prepared by the role's processes or, for those they
// have not reached yet, here (PrepareNow); nil without one.
func (v *verified) sketchesOf(todo map[int]*protocol.Upload) (map[payload.ReportID][]byte, error) {
	if v.prep == nil || len(todo) == 0 {
		return nil, nil
	}
	ups := make([]*protocol.Upload, 0, len(todo))
	for _, up := range todo {
		ups = append(ups, up)
	}
	ready, sk, _, err := v.prep.sketchesNow(ups, true)
	if err != nil {
		return nil, err
	}
	sketches := make(map[payload.ReportID][]byte, len(ready))
	for i, up := range ready {
		sketches[up.Report] = sk[i]
	}
	return sketches, nil
}

// tentativeOf returns the digests of the uploads of fresh, the helper's
// new answers.
func (v *verified) tentativeOf(fresh map[int]*tentative) func(payload.ReportID) ([sha256.Size]byte, bool) {
	byID := make(map[payload.ReportID][sha256.Size]byte, len(fresh))
	for _, t := range fresh {
		byID[t.item.Report] = t.digest
	}
	return func(id payload.ReportID) ([sha256.Size]byte, bool) {
		d, ok := byID[id]
		return d, ok
	}
}

// prepareHelper prepares the uploads todo (by index into the leader's
// items) at the helper — those with a sketch from it, the others here —
// returning its answers by the same index: each the leader's
// rejection, or its own, or its message.
func (v *verified) prepareHelper(todo map[int]*protocol.Upload, items []protocol.Item, sketches map[payload.ReportID][]byte) map[int]*tentative {
	fresh := make(map[int]*tentative, len(todo))
	var ups []*protocol.Upload
	var msgs [][]byte
	var follow []*tentative
	for _, j := range slices.Sorted(maps.Keys(todo)) {
		t := &tentative{item: protocol.Item{Report: todo[j].Report, Verdict: items[j].Verdict}, digest: uploadDigest(todo[j])}
		fresh[j] = t
		if t.item.Verdict == protocol.VerdictOK {
			ups, msgs, follow = append(ups, todo[j]), append(msgs, items[j].Message), append(follow, t)
		}
	}
	for k, st := range v.follow(ups, msgs, sketches) {
		t := follow[k]
		if t.item.Verdict = verdictOf(st.err); t.item.Verdict == protocol.VerdictOK {
			t.item.Message, t.state = st.msg, st.state
		}
	}
	return fresh
}

// decided applies the leader's final verdicts at the helper: a report
// counts only if both servers accepted it (the helper settling it from
// the leader's message); a rejection counts under the leader's reason
// (which includes the helper's), also for a report the helper does not
// hold. An acceptance of a report it did not prepare, and any verdict on
// a report decided already, are ignored.
func (s *Server) decided(m *protocol.Decide) (protocol.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.verifiedDataset(m.Dataset)
	if err != nil {
		return nil, err
	}
	v := d.verified
	var final []protocol.Item
	outs := make(map[payload.ReportID]any)
	for _, it := range m.Items {
		if _, done := v.verdict(it.Report); done {
			continue
		}
		t, prepared := v.tentative[it.Report]
		switch {
		case prepared:
			verdict := firstRejection(it.Verdict, t.item.Verdict)
			if verdict == protocol.VerdictOK {
				var err error
				outs[it.Report], err = v.scheme.settle(t.state, it.Message)
				verdict = verdictOf(err)
			}
			final = append(final, protocol.Item{Report: it.Report, Verdict: verdict})
		case it.Verdict != protocol.VerdictOK:
			// Held or not yet (or never, when the leader refused a
			// relayed upload): rejected here too, and an upload
			// arriving later is a duplicate.
			final = append(final, protocol.Item{Report: it.Report, Verdict: it.Verdict})
		}
	}
	if err := v.save(stageFinal, final, v.tentativeDigest); err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	for _, it := range final {
		digest, _ := v.tentativeDigest(it.Report) // an acceptance's: prepared
		v.decide(Helper, it.Report, it.Verdict, digest, outs[it.Report], nil)
	}
	return &protocol.Ack{}, nil
}

// follow is scheme.follow, from the sketches of the reports that have
// one (followSketched).
func (v *verified) follow(ups []*protocol.Upload, msgs [][]byte, sketches map[payload.ReportID][]byte) []step {
	if len(sketches) == 0 {
		return v.scheme.follow(ups, msgs)
	}
	var with, without []int
	for k, up := range ups {
		if _, ok := sketches[up.Report]; ok {
			with = append(with, k)
		} else {
			without = append(without, k)
		}
	}
	steps := make([]step, len(ups))
	for _, part := range []struct {
		at    []int
		steps func(ups []*protocol.Upload, msgs [][]byte) []step
	}{
		{with, func(ups []*protocol.Upload, msgs [][]byte) []step {
			sk := make([][]byte, len(ups))
			for k, up := range ups {
				sk[k] = sketches[up.Report]
			}
			return v.prep.dcf.followSketched(ups, msgs, sk)
		}},
		{without, v.scheme.follow},
	} {
		pu, pm := make([]*protocol.Upload, len(part.at)), make([][]byte, len(part.at))
		for i, k := range part.at {
			pu[i], pm[i] = ups[k], msgs[k]
		}
		for i, st := range part.steps(pu, pm) {
			steps[part.at[i]] = st
		}
	}
	return steps
}
