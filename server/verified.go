package server

// Verification state: the reports a server holds until both servers
// have verified them (hold), their verdicts, and the replay of a store.

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"runtime"
	"sync"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// verifyBatch is the most reports the leader verifies in one exchange.
const verifyBatch = 256

// verified is a verified dataset's verification state at one server,
// for the additive and the verified DCF backend alike (see the package
// doc, "The additive backend" and "The DCF backend").
type verified struct {
	scheme scheme
	// uploads holds the reports received and not yet decided (prepared
	// ones too).
	uploads map[payload.ReportID]*protocol.Upload
	// tentative holds, at the helper, the reports it prepared and
	// answered for, until the leader's Decide.
	tentative map[payload.ReportID]*tentative
	// The final verdict of every decided report (verdict) is OK for
	// those in counted, the dataset's reports (accepted and counted),
	// and in restore, and refused's otherwise: one set of IDs for the
	// accepted reports at a server, not two; counted keeps the digest of
	// each one's upload (heldReports).
	counted heldReports
	refused map[payload.ReportID]protocol.Verdict
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
	// re-derived (scheme.rederive), when its upload is replayed (hold).
	restore map[payload.ReportID]bool
	// rederived holds outputs of reports in restore re-derived ahead of
	// their replay, in parallel (Server.PrepareReplay).
	rederived map[payload.ReportID]any
	// restoreTentative holds, at the helper, the tentative answers
	// stored before a restart on reports not held again yet: each its
	// verdict and the leader's message it answered (retentative).
	restoreTentative map[payload.ReportID]protocol.Item
	// accepted holds, for the reports in restore and restoreTentative,
	// the digest of the upload accepted (verdicts.go), against which
	// their replayed upload is checked (checkAccepted).
	accepted map[payload.ReportID][sha256.Size]byte
	// gate: an upload is verified only once the caller has made it
	// durable (Server.Stored); unstored holds those it has not yet.
	gate     bool
	unstored map[payload.ReportID]bool
	// prep, if not nil, is where the role's processes prepared the
	// reports (Config.Preparations): a report is verified from its
	// sketch once prepared, and no output is added here.
	prep *prepared
}

// tentative is the helper's answer on a report before the leader's
// decision, and its state to settle it.
type tentative struct {
	item   protocol.Item // its answer to Prepare
	state  any
	digest [sha256.Size]byte // of the upload answered for (uploadDigest)
}

// scheme is one verified backend at one server: the additive backend's
// Prio3 (internal/verify) or the DCF backend's verifiable DCF
// (internal/vdcf). The exchange around it (Verify, prepared, decided) is
// the same for both. The batch methods work on a batch's reports in
// parallel, outside the server's lock; the others run under it.
type scheme interface {
	// check decodes an upload at receipt; safe for concurrent use.
	check(up *protocol.Upload) error
	// lead prepares reports at the leader: per report, its state and
	// first message.
	lead(ups []*protocol.Upload) []step
	// follow prepares reports at the helper against the leader's
	// messages: per report, its state for settle and its answer.
	follow(ups []*protocol.Upload, leader [][]byte) []step
	// conclude decides reports at the leader from their states (nil:
	// skip) and the helper's answers: per report, the output to add and
	// its message for Decide.
	conclude(states []any, answers [][]byte) []step
	// settle is the helper's decision on a report it answered for and the
	// leader accepted, from its state and the leader's Decide message:
	// the report's output, to add.
	settle(state any, leaderMsg []byte) (any, error)
	// kept is what the helper's tentative record of an acceptance keeps
	// of the leader's message and its own answer (follow): no more than
	// resume needs to answer the same again and settle.
	kept(leader, answer []byte) []byte
	// resume restores, after a restart, the helper's answer and state on
	// a report from its replayed upload and what its tentative record
	// kept (each scheme's preparation is deterministic given the key,
	// the share and the nonce).
	resume(up *protocol.Upload, kept []byte) step
	// The aggregator is the aggregate of the accepted reports.
	aggregator
	// fresh returns an empty aggregate, for a release over fewer reports
	// than the aggregate (releaseSums).
	fresh() (aggregator, error)
	// rederive re-derives, from its replayed upload alone, the output of
	// a report both servers accepted before a restart; it does not
	// verify the report again.
	rederive(up *protocol.Upload) (any, error)
}

// aggregator is a sum of accepted reports' outputs at one server.
type aggregator interface {
	// add counts an accepted report's output (the additive backend's
	// ErrReplay: counted already; the caller refuses replays first).
	add(id payload.ReportID, out any) error
	// accepted is the number of reports added.
	accepted() int
	// sums sets the release's sums from the aggregate.
	sums(rel *release) error
}

// step is one report's result of a batch method of a scheme.
type step struct {
	state any // or the output, from conclude
	msg   []byte
	err   error
}

// newVerified returns the verification state of a verified dataset d at
// the server of role, with the servers' shared key, keeping its verdicts
// in store (gate: verifying only uploads made durable), and the
// reports it accepts in counted, the dataset's report set.
func newVerified(d Dataset, role Role, key [verify.KeySize]byte, store VerdictStore, gate bool, counted heldReports) (*verified, error) {
	var sch scheme
	var err error
	if d.Backend == Additive {
		sch, err = newAdditive(d.Bins, role, key)
	} else {
		sch, err = newVDCF(d.Bins, d.Probability, role, key)
	}
	if err != nil {
		return nil, err
	}
	return &verified{
		scheme:    sch,
		uploads:   make(map[payload.ReportID]*protocol.Upload),
		tentative: make(map[payload.ReportID]*tentative),
		counted:   counted,
		refused:   make(map[payload.ReportID]protocol.Verdict),
		rejected:  make(map[string]int),
		dataset:   d.Name, store: store, gate: gate,
		restore:          make(map[payload.ReportID]bool),
		rederived:        make(map[payload.ReportID]any),
		restoreTentative: make(map[payload.ReportID]protocol.Item),
		accepted:         make(map[payload.ReportID][sha256.Size]byte),
		unstored:         make(map[payload.ReportID]bool),
	}, nil
}

// parallel runs fn(i) for i = 0, …, n−1 on GOMAXPROCS goroutines and
// returns when all are done.
func parallel(n int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
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

// hold accepts a verified upload for verification: a report whose
// shares do not decode is rejected at once (malformed, or mismatch for a
// verified DCF key of the other server or grid), and the helper told, by
// the leader; a report already held or accepted is a duplicate, one
// rejected is refused again with its reason (not acknowledged, so not
// stored again). A report accepted before a restart is counted again,
// in counted (the dataset's reports), and a helper's tentative answer
// from before a restart restored. The caller holds s.mu.
func (v *verified) hold(role Role, m *protocol.Upload) (duplicate bool, err error) {
	if _, held := v.uploads[m.Report]; held {
		return true, nil
	}
	if err := v.checkAccepted(m); err != nil {
		return false, err
	}
	if verdict, decided := v.verdict(m.Report); decided {
		switch {
		case v.restore[m.Report]:
			return false, v.rederive(m)
		case verdict != protocol.VerdictOK:
			return false, fmt.Errorf("decided already: %w", verdicts[verdict])
		}
		return true, nil
	}
	if err := v.scheme.check(m); err != nil {
		verdict := verdictOf(err)
		if err := v.save(stageFinal, []protocol.Item{{Report: m.Report, Verdict: verdict}}, v.heldDigest); err != nil {
			return false, err
		}
		v.decide(role, m.Report, verdict, [sha256.Size]byte{}, nil, nil)
		return false, err
	}
	if it, ok := v.restoreTentative[m.Report]; ok {
		t, err := v.retentative(m, it)
		if err != nil {
			return false, err
		}
		v.tentative[m.Report] = t
		delete(v.restoreTentative, m.Report)
	}
	v.uploads[m.Report] = m
	if v.gate {
		v.unstored[m.Report] = true
	}
	return false, nil
}

// rederive counts again a report accepted before a restart, from its
// replayed upload (scheme.rederive), or the output derived from it
// ahead (PrepareReplay). The caller (hold) checked m against the digest
// its verdict record keeps (checkAccepted), which counted then keeps.
func (v *verified) rederive(m *protocol.Upload) error {
	out, ok := v.rederived[m.Report]
	delete(v.rederived, m.Report)
	var err error
	if !ok && v.prep == nil { // prepared: its output is in a fold
		out, err = v.scheme.rederive(m)
	}
	if err != nil {
		return fmt.Errorf("re-deriving the output of report %v, accepted before a restart: %w", m.Report, err)
	}
	if err := v.scheme.add(m.Report, out); err != nil {
		return fmt.Errorf("report %v, accepted before a restart: %w", m.Report, err)
	}
	digest, ok := v.accepted[m.Report]
	if !ok { // a verdict record of version 2 keeps no digest
		digest = uploadDigest(m)
	}
	delete(v.restore, m.Report)
	delete(v.accepted, m.Report)
	v.counted[m.Report] = digest
	return nil
}

// retentative restores the helper's tentative answer it stored, it, on
// the replayed upload m: an acceptance with its message and state for
// settle derived again from what its record kept (scheme.resume; each
// scheme's preparation is deterministic given the key, the share and the
// nonce, so the answer is the one the leader may have received).
func (v *verified) retentative(m *protocol.Upload, it protocol.Item) (*tentative, error) {
	t := &tentative{item: protocol.Item{Report: m.Report, Verdict: it.Verdict}, digest: uploadDigest(m)}
	if it.Verdict != protocol.VerdictOK {
		return t, nil
	}
	delete(v.accepted, m.Report)
	st := v.scheme.resume(m, it.Message)
	if st.err != nil {
		return nil, fmt.Errorf("restoring the tentative verdict on report %v: %w", m.Report, st.err)
	}
	t.item.Message, t.state = st.msg, st.state
	return t, nil
}

// PrepareReplay prepares the replay (Handle) of uploads, the encoded
// upload requests of dataset a restarted server held before (one that
// does not decode is left for its replay to refuse): it re-derives, on GOMAXPROCS
// goroutines and outside the server's lock, the outputs of the reports
// among them that both servers accepted, which their replay then adds
// without deriving them again under the lock (a restarted server
// replaying its store in chunks through it re-derives at the speed of
// its cores, not of one; an output that fails to derive is left for the
// replay to fail on); and it returns the reports among them that this
// server rejected finally, whose uploads need no replay (their verdicts
// are loaded, and an upload of them is refused) and may be dropped. An
// upload of a report accepted before the restart that is not the one
// accepted (its digest differs from its verdict record's) is an error
// wrapping ErrUploadChanged and naming the report.
func (s *Server) PrepareReplay(dataset string, uploads [][]byte) (rejected []core.ID, err error) {
	ups := decodeUploads(uploads)
	s.mu.Lock()
	d, ok := s.datasets[dataset]
	if !ok || d.verified == nil {
		s.mu.Unlock()
		return nil, nil
	}
	v := d.verified
	var todo, check []*protocol.Upload
	var want [][sha256.Size]byte
	for _, up := range ups {
		verdict, decided := v.verdict(up.Report)
		_, done := v.rederived[up.Report]
		switch {
		case decided && verdict != protocol.VerdictOK:
			rejected = append(rejected, up.Report)
		case v.restore[up.Report] && !done && v.prep == nil:
			todo = append(todo, up)
		}
		if digest, ok := v.accepted[up.Report]; ok {
			check, want = append(check, up), append(want, digest)
		}
	}
	s.mu.Unlock()
	changed := make([]bool, len(check))
	parallel(len(check), func(i int) { changed[i] = uploadDigest(check[i]) != want[i] })
	for i, c := range changed {
		if c {
			return rejected, fmt.Errorf("server: dataset %q: report %v, accepted before a restart: %w: its upload's digest is not the one its verdict record keeps (the store was edited or damaged); quarantine the report at both servers", dataset, check[i].Report, ErrUploadChanged)
		}
	}
	outs := make([]any, len(todo))
	parallel(len(todo), func(i int) {
		if out, err := v.scheme.rederive(todo[i]); err == nil {
			outs[i] = out
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, up := range todo {
		if outs[i] != nil && v.restore[up.Report] {
			v.rederived[up.Report] = outs[i]
		}
	}
	return rejected, nil
}

// decodeUploads decodes the upload requests among reqs.
func decodeUploads(reqs [][]byte) []*protocol.Upload {
	ups := make([]*protocol.Upload, 0, len(reqs))
	for _, req := range reqs {
		if msg, err := protocol.Decode(req); err == nil {
			if up, ok := msg.(*protocol.Upload); ok {
				ups = append(ups, up)
			}
		}
	}
	return ups
}

// Stored tells the server that the upload of report id of dataset, which
// it accepted, is durable: with a Config.Verdicts store, a verified
// report is verified only then, so that no report is decided that a
// restarted server could not count again from its store.
func (s *Server) Stored(dataset string, id core.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.datasets[dataset]; ok && d.verified != nil {
		delete(d.verified.unstored, id)
	}
}

// reasonOf is the rejection reason of a verdict (verify.Reason).
func reasonOf(v protocol.Verdict) string { return verify.Reason(verdicts[v]) }

// decide records the final verdict on report id, counting it in the
// aggregate (out) and the dataset's reports, with the digest of its
// upload (digest), or among the rejections; the leader queues it for
// the helper, with its message msg for the helper's settle. It returns
// whether the report was accepted.
func (v *verified) decide(role Role, id payload.ReportID, verdict protocol.Verdict, digest [sha256.Size]byte, out any, msg []byte) bool {
	if verdict == protocol.VerdictOK {
		verdict = verdictOf(v.add(id, out))
	}
	if verdict == protocol.VerdictOK {
		v.counted[id] = digest
	} else {
		v.refused[id] = verdict
	}
	delete(v.uploads, id)
	delete(v.tentative, id)
	if verdict != protocol.VerdictOK {
		v.rejected[reasonOf(verdict)]++
	}
	if role == Leader {
		v.untold = append(v.untold, decision(id, verdict, msg))
	}
	return verdict == protocol.VerdictOK
}

// verdict returns the final verdict on report id, if decided.
func (v *verified) verdict(id payload.ReportID) (protocol.Verdict, bool) {
	if verdict, ok := v.refused[id]; ok {
		return verdict, true
	}
	_, counted := v.counted[id]
	return protocol.VerdictOK, counted || v.restore[id]
}

// add counts the output of report id, accepted now: a report decided
// already is a replay (every report counted is decided: here, or
// before a restart and counted again once, by rederive).
func (v *verified) add(id payload.ReportID, out any) error {
	if _, decided := v.verdict(id); decided {
		return fmt.Errorf("%w: report %v counted already", verify.ErrReplay, id)
	}
	if v.prep != nil {
		out = nil // in a fold
	}
	return v.scheme.add(id, out)
}

// Rejected returns, per reason (verify.Reason: malformed, mismatch,
// proof, replay), how many reports of the verified dataset this server
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
