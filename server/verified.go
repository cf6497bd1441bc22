package server

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// verifyBatch is the most reports the leader verifies in one exchange.
const verifyBatch = 256

// verified is an additive dataset's verification state at one server
// (see the package doc, "The additive backend").
type verified struct {
	srv  *verify.Server    // checks uploads (decoding only: safe for concurrent use)
	pool pool              // prepares and decides
	agg  *verify.Aggregate // the accepted reports' output shares
	// uploads holds the reports received and not yet decided (prepared
	// ones too).
	uploads map[payload.ReportID]*protocol.Upload
	// tentative holds, at the helper, the reports it prepared and decided
	// on, until the leader's Decide.
	tentative map[payload.ReportID]*tentative
	// final is the final verdict of every decided report.
	final map[payload.ReportID]protocol.Verdict
	// untold holds, at the leader, final verdicts the helper has not
	// acknowledged yet (sent with the next exchange).
	untold []protocol.Item
	// rejected counts the rejected reports by reason (verify.Reason).
	rejected map[string]int

	// dataset names the dataset in store, which keeps every verdict
	// before the server acts on it (verdicts.go).
	dataset string
	store   VerdictStore
	// restore holds the reports accepted before a restart whose uploads
	// are not held again yet: each is added to the aggregate, its output
	// share re-derived, when its upload is replayed (hold).
	restore map[payload.ReportID]bool
	// restoreTentative holds, at the helper, the tentative verdicts
	// stored before a restart on reports not held again yet.
	restoreTentative map[payload.ReportID]protocol.Verdict
	// gate: an upload is verified only once the caller has made it
	// durable (Server.Stored); unstored holds those it has not yet.
	gate     bool
	unstored map[payload.ReportID]bool
}

// tentative is the helper's decision on a report before the leader's.
type tentative struct {
	item protocol.Item // its answer to Prepare
	out  *verify.Output
}

// newVerified returns the verification state of the additive dataset d
// at the server of role, with the servers' shared key, keeping its
// verdicts in store (gate: verifying only uploads made durable).
func newVerified(d Dataset, role Role, key [verify.KeySize]byte, store VerdictStore, gate bool) (*verified, error) {
	bins := d.Bins
	p := make(pool, runtime.GOMAXPROCS(0))
	var scheme *verify.Scheme
	var srv *verify.Server
	for range cap(p) {
		var err error
		if scheme, err = verify.New(bins); err != nil {
			return nil, err
		}
		if srv, err = scheme.NewServer(int(role), key); err != nil {
			return nil, err
		}
		p <- srv
	}
	return &verified{
		srv: srv, pool: p, agg: scheme.NewAggregate(),
		uploads:   make(map[payload.ReportID]*protocol.Upload),
		tentative: make(map[payload.ReportID]*tentative),
		final:     make(map[payload.ReportID]protocol.Verdict),
		rejected:  make(map[string]int),
		dataset:   d.Name, store: store, gate: gate,
		restore:          make(map[payload.ReportID]bool),
		restoreTentative: make(map[payload.ReportID]protocol.Verdict),
		unstored:         make(map[payload.ReportID]bool),
	}, nil
}

// pool holds one verify.Server per core: a verify.Server runs one
// verification at a time (circl's Prio3 keeps one XOF state), and a
// batch's reports are verified in parallel.
type pool chan *verify.Server

// each runs fn(srv, i) for i = 0, …, n−1 on the pool's servers, in
// parallel, and returns when all are done.
func (p pool) each(n int, fn func(srv *verify.Server, i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(cap(p), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := <-p
			defer func() { p <- srv }()
			for i := range next {
				fn(srv, i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// verdicts maps the rejection verdicts to verify's sentinel errors.
var verdicts = map[protocol.Verdict]error{
	protocol.VerdictMalformed: verify.ErrMalformed,
	protocol.VerdictMismatch:  verify.ErrMismatch,
	protocol.VerdictProof:     verify.ErrProof,
	protocol.VerdictReplay:    verify.ErrReplay,
}

// verdictOf returns the verdict of a verification error (nil: VerdictOK).
func verdictOf(err error) protocol.Verdict {
	if err == nil {
		return protocol.VerdictOK
	}
	for v, e := range verdicts {
		if verify.Reason(err) == verify.Reason(e) {
			return v
		}
	}
	return protocol.VerdictMalformed
}

// firstRejection returns the first of vs that is a rejection, or
// VerdictOK.
func firstRejection(vs ...protocol.Verdict) protocol.Verdict {
	for _, v := range vs {
		if v != protocol.VerdictOK {
			return v
		}
	}
	return protocol.VerdictOK
}

// hold accepts an additive upload for verification: a report whose
// shares do not decode is rejected at once as malformed (and the helper
// told, by the leader); a report already held or decided is a duplicate.
// A report accepted before a restart is counted again (accepted), and a
// helper's tentative verdict from before a restart restored. The caller
// holds s.mu.
func (v *verified) hold(role Role, m *protocol.Upload) (duplicate, accepted bool, err error) {
	if _, held := v.uploads[m.Report]; held {
		return true, false, nil
	}
	if _, decided := v.final[m.Report]; decided {
		if !v.restore[m.Report] {
			return true, false, nil
		}
		return false, true, v.rederive(m)
	}
	if err := v.srv.Check(m.Public, m.Share); err != nil {
		if err := v.save(stageFinal, []protocol.Item{{Report: m.Report, Verdict: protocol.VerdictMalformed}}); err != nil {
			return false, false, err
		}
		v.decide(role, m.Report, protocol.VerdictMalformed, nil)
		return false, false, err
	}
	if verdict, ok := v.restoreTentative[m.Report]; ok {
		t, err := v.retentative(m, verdict)
		if err != nil {
			return false, false, err
		}
		v.tentative[m.Report] = t
		delete(v.restoreTentative, m.Report)
	}
	v.uploads[m.Report] = m
	if v.gate {
		v.unstored[m.Report] = true
	}
	return false, false, nil
}

// rederive counts again a report accepted before a restart, from its
// replayed upload (verify.Server.Rederive).
func (v *verified) rederive(m *protocol.Upload) error {
	srv := <-v.pool
	defer func() { v.pool <- srv }()
	out, err := srv.Rederive(m.Report, m.Public, m.Share)
	if err != nil {
		return fmt.Errorf("re-deriving the output share of report %v, accepted before a restart: %w", m.Report, err)
	}
	if err := v.agg.Add(m.Report, out); err != nil {
		return fmt.Errorf("report %v, accepted before a restart: %w", m.Report, err)
	}
	delete(v.restore, m.Report)
	return nil
}

// retentative restores the helper's tentative verdict on the replayed
// upload m: an acceptance with its verifier message and output share,
// both derived again (Prepare is deterministic).
func (v *verified) retentative(m *protocol.Upload, verdict protocol.Verdict) (*tentative, error) {
	t := &tentative{item: protocol.Item{Report: m.Report, Verdict: verdict}}
	if verdict != protocol.VerdictOK {
		return t, nil
	}
	srv := <-v.pool
	defer func() { v.pool <- srv }()
	_, msg, err := srv.Prepare(m.Report, m.Public, m.Share)
	if err == nil {
		t.out, err = srv.Rederive(m.Report, m.Public, m.Share)
	}
	if err != nil {
		return nil, fmt.Errorf("restoring the tentative verdict on report %v: %w", m.Report, err)
	}
	t.item.Message = msg
	return t, nil
}

// Stored tells the server that the upload of report id of dataset, which
// it accepted, is durable: with a Config.Verdicts store, an additive
// report is verified only then, so that no report is decided that a
// restarted server could not count again from its store.
func (s *Server) Stored(dataset string, id payload.ReportID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.datasets[dataset]; ok && d.verified != nil {
		delete(d.verified.unstored, id)
	}
}

// reasonOf is the rejection reason of a verdict (verify.Reason).
func reasonOf(v protocol.Verdict) string { return verify.Reason(verdicts[v]) }

// decide records the final verdict on report id, counting it in the
// aggregate (out) or among the rejections; the leader queues it for the
// helper. It returns whether the report was accepted.
func (v *verified) decide(role Role, id payload.ReportID, verdict protocol.Verdict, out *verify.Output) bool {
	if verdict == protocol.VerdictOK {
		verdict = verdictOf(v.agg.Add(id, out))
	}
	v.final[id] = verdict
	delete(v.uploads, id)
	delete(v.tentative, id)
	if verdict != protocol.VerdictOK {
		v.rejected[reasonOf(verdict)]++
	}
	if role == Leader {
		v.untold = append(v.untold, protocol.Item{Report: id, Verdict: verdict})
	}
	return verdict == protocol.VerdictOK
}

// Rejected returns, per reason (verify.Reason: malformed, mismatch,
// proof, replay), how many reports of the additive dataset this server
// rejected.
func (s *Server) Rejected(dataset string) (map[string]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.dataset(dataset)
	if err != nil {
		return nil, err
	}
	if d.verified == nil {
		return nil, fmt.Errorf("%s: dataset %q uses the %s backend: no verified reports", s.cfg.Role, d.Name, d.Backend)
	}
	return maps.Clone(d.verified.rejected), nil
}

// Verify runs, at the leader, the verification of every additive report
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
		if err := s.verifyDataset(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// verifyDataset is Verify for one dataset; it holds s.verifying. The
// reports the helper does not hold yet are left for a later run.
func (s *Server) verifyDataset(ctx context.Context, d *dataset) error {
	s.verifying.Lock()
	defer s.verifying.Unlock()
	missing := make(map[payload.ReportID]bool)
	for {
		batch := s.prepareBatch(d, missing)
		if len(batch.items) != 0 {
			if err := s.exchange(ctx, d, batch, missing); err != nil {
				return fmt.Errorf("leader: verifying reports of dataset %q: %w", d.Name, err)
			}
		}
		if err := s.tell(ctx, d); err != nil {
			return fmt.Errorf("leader: verifying reports of dataset %q: %w", d.Name, err)
		}
		if len(batch.items) < verifyBatch {
			return nil
		}
	}
}

// leaderBatch is the leader's half of one exchange: its items and its
// pending preparations.
type leaderBatch struct {
	items   []protocol.Item
	pending []*verify.Pending // of items[j]
}

// prepareBatch prepares up to verifyBatch held reports at the leader, in
// ID order, other than those the helper lacks (skip).
func (s *Server) prepareBatch(d *dataset, skip map[payload.ReportID]bool) *leaderBatch {
	v := d.verified
	var ups []*protocol.Upload
	s.mu.Lock()
	for _, id := range slices.SortedFunc(maps.Keys(v.uploads), payload.CompareIDs) {
		if len(ups) == verifyBatch {
			break
		}
		if !skip[id] && !v.unstored[id] {
			ups = append(ups, v.uploads[id])
		}
	}
	s.mu.Unlock()
	b := &leaderBatch{items: make([]protocol.Item, len(ups)), pending: make([]*verify.Pending, len(ups))}
	v.pool.each(len(ups), func(srv *verify.Server, j int) {
		p, msg, err := srv.Prepare(ups[j].Report, ups[j].Public, ups[j].Share)
		b.items[j] = protocol.Item{Report: ups[j].Report, Verdict: verdictOf(err), Message: msg}
		b.pending[j] = p
	})
	return b
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
	outs := make([]*verify.Output, len(b.items))
	d.verified.pool.each(len(b.items), func(srv *verify.Server, j int) {
		theirs := resp.Items[j]
		verdicts[j] = firstRejection(b.items[j].Verdict, theirs.Verdict)
		if verdicts[j] == protocol.VerdictOK && !missing[theirs.Report] {
			var err error
			outs[j], err = srv.Finish(b.pending[j], theirs.Message)
			verdicts[j] = verdictOf(err)
		}
	})
	var final []protocol.Item
	for j, own := range b.items {
		if !missing[own.Report] {
			final = append(final, protocol.Item{Report: own.Report, Verdict: verdicts[j]})
		}
	}
	if err := d.verified.save(stageFinal, final); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for j, own := range b.items {
		if !missing[own.Report] && d.verified.decide(Leader, own.Report, verdicts[j], outs[j]) {
			d.reports[own.Report] = struct{}{}
		}
	}
	return nil
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

// verifiedDataset returns the additive dataset a verification message
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
	idx := slices.Sorted(maps.Keys(todo))
	fresh := make([]*tentative, len(idx))
	v.pool.each(len(idx), func(srv *verify.Server, k int) {
		fresh[k] = prepareHelper(srv, todo[idx[k]], m.Items[idx[k]])
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	var kept []protocol.Item
	for _, t := range fresh {
		if _, held := v.uploads[t.item.Report]; held {
			kept = append(kept, protocol.Item{Report: t.item.Report, Verdict: t.item.Verdict})
		}
	}
	if err := v.save(stageTentative, kept); err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	for k, t := range fresh {
		if _, held := v.uploads[t.item.Report]; held {
			v.tentative[t.item.Report] = t
		}
		resp.Items[idx[k]] = t.item
	}
	return resp, nil
}

// known sets the helper's answer for report id if it has one already,
// and otherwise returns its upload, to prepare; the caller holds s.mu.
func (v *verified) known(id payload.ReportID, answer *protocol.Item) *protocol.Upload {
	if verdict, ok := v.final[id]; ok {
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

// prepareHelper verifies up at the helper, on srv, against the leader's
// item.
func prepareHelper(srv *verify.Server, up *protocol.Upload, theirs protocol.Item) *tentative {
	p, msg, err := srv.Prepare(up.Report, up.Public, up.Share)
	t := &tentative{item: protocol.Item{Report: up.Report, Verdict: firstRejection(verdictOf(err), theirs.Verdict)}}
	if t.item.Verdict == protocol.VerdictOK {
		t.out, err = srv.Finish(p, theirs.Message)
		t.item.Verdict = verdictOf(err)
	}
	if t.item.Verdict == protocol.VerdictOK {
		t.item.Message = msg
	}
	return t
}

// decided applies the leader's final verdicts at the helper: a report
// counts only if both servers accepted it; a rejection counts under the
// leader's reason (which includes the helper's), also for a report the
// helper does not hold. An acceptance of a report it did not prepare,
// and any verdict on a report decided already, are ignored.
func (s *Server) decided(m *protocol.Decide) (protocol.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.verifiedDataset(m.Dataset)
	if err != nil {
		return nil, err
	}
	v := d.verified
	var final []protocol.Item
	for _, it := range m.Items {
		if _, done := v.final[it.Report]; done {
			continue
		}
		t, prepared := v.tentative[it.Report]
		switch {
		case prepared:
			final = append(final, protocol.Item{Report: it.Report, Verdict: firstRejection(it.Verdict, t.item.Verdict)})
		case it.Verdict != protocol.VerdictOK:
			// Held or not yet (or never, when the leader refused a
			// relayed upload): rejected here too, and an upload
			// arriving later is a duplicate.
			final = append(final, protocol.Item{Report: it.Report, Verdict: it.Verdict})
		}
	}
	if err := v.save(stageFinal, final); err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	for _, it := range final {
		var out *verify.Output
		if t, ok := v.tentative[it.Report]; ok {
			out = t.out
		}
		if v.decide(Helper, it.Report, it.Verdict, out) {
			d.reports[it.Report] = struct{}{}
		}
	}
	return &protocol.Ack{}, nil
}

// fieldSums returns, per component of comps, this server's shares in the
// field of the prefix sums over all its accepted reports, which must be
// the release's report set ids: the servers agree on verified reports,
// and a release over a subset of them is not supported.
func (v *verified) fieldSums(held map[payload.ReportID]struct{}, ids []payload.ReportID, comps []payload.Component) (map[payload.Component]fp128.Vec, error) {
	if len(ids) != len(held) || len(ids) != v.agg.Len() {
		return nil, fmt.Errorf("the release's %d reports are not the %d this server verified: a release over a subset of the verified reports is not supported; retry it", len(ids), v.agg.Len())
	}
	p, err := v.agg.Prefixes()
	if err != nil {
		return nil, err
	}
	out := make(map[payload.Component]fp128.Vec, len(comps))
	for _, c := range comps {
		switch c {
		case payload.Count:
			out[c] = p.Count
		case payload.Label:
			out[c] = p.Label
		case payload.NotLabel:
			out[c] = p.NotLabel
		default:
			return nil, fmt.Errorf("component %v is not carried by verified reports", c)
		}
	}
	return out, nil
}
