package server

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// additive is the additive backend's scheme: Prio3Histogram
// (internal/verify), one round: the helper decides from both verifier
// messages when it answers, the leader when it reads the answer.
type additive struct {
	additiveSum // the aggregate of the accepted reports
	sch         *verify.Scheme
	srv         *verify.Server // decoding only: safe for concurrent use
	pool        pool           // prepares and decides
}

// additiveSum is an aggregate of additive outputs.
type additiveSum struct{ agg *verify.Aggregate }

// pool holds one verify.Server per core: a verify.Server runs one
// verification at a time (circl's Prio3 keeps one XOF state), and a
// batch's reports are verified in parallel.
type pool chan *verify.Server

// each runs fn(srv, i) for i = 0, …, n−1 in parallel, each on a server
// of the pool, and returns its steps.
func (p pool) each(n int, fn func(srv *verify.Server, i int) step) []step {
	steps := make([]step, n)
	parallel(n, func(i int) {
		srv := <-p
		defer func() { p <- srv }()
		steps[i] = fn(srv, i)
	})
	return steps
}

func newAdditive(bins int, role Role, key [verify.KeySize]byte) (*additive, error) {
	a := &additive{pool: make(pool, runtime.GOMAXPROCS(0))}
	for range cap(a.pool) {
		var err error
		if a.sch, err = verify.New(bins); err != nil {
			return nil, err
		}
		if a.srv, err = a.sch.NewServer(int(role), key); err != nil {
			return nil, err
		}
		a.pool <- a.srv
	}
	a.agg = a.sch.NewAggregate()
	return a, nil
}

// fresh returns an empty aggregate.
func (a *additive) fresh() (aggregator, error) { return &additiveSum{a.sch.NewAggregate()}, nil }

func (a *additive) check(up *protocol.Upload) error { return a.srv.Check(up.Public, up.Share) }

// settle returns the output the helper computed when it answered.
func (a *additive) settle(state any, _ []byte) (any, error) { return state, nil }

func (a *additiveSum) add(id payload.ReportID, out any) error {
	return a.agg.Add(id, out.(*verify.Output))
}

func (a *additiveSum) accepted() int { return a.agg.Len() }

// rederive re-derives the output share (verify.Server.Rederive).
func (a *additive) rederive(up *protocol.Upload) (any, error) {
	srv := <-a.pool
	defer func() { a.pool <- srv }()
	return srv.Rederive(up.Report, up.Public, up.Share)
}

func (a *additiveSum) sums(rel *release) error {
	p, err := a.agg.Prefixes()
	if err != nil {
		return err
	}
	field := make(map[payload.Component]fp128.Vec, len(rel.components))
	for _, c := range rel.components {
		switch c {
		case payload.Count:
			field[c] = p.Count
		case payload.Label:
			field[c] = p.Label
		case payload.NotLabel:
			field[c] = p.NotLabel
		default:
			return fmt.Errorf("component %v is not carried by verified reports", c)
		}
	}
	rel.field = field
	return nil
}

func (a *additive) lead(ups []*protocol.Upload) []step {
	return a.pool.each(len(ups), func(srv *verify.Server, j int) step {
		p, msg, err := srv.Prepare(ups[j].Report, ups[j].Public, ups[j].Share)
		return step{p, msg, err}
	})
}

// follow prepares and decides at once: the state is the output.
func (a *additive) follow(ups []*protocol.Upload, leader [][]byte) []step {
	return a.pool.each(len(ups), func(srv *verify.Server, j int) step {
		p, msg, err := srv.Prepare(ups[j].Report, ups[j].Public, ups[j].Share)
		if err != nil {
			return step{err: err}
		}
		out, err := srv.Finish(p, leader[j])
		return step{out, msg, err}
	})
}

// kept is the leader's message: follow derives the answer and the
// output again from it (Prio3's query randomness is drawn per report from
// the key and the nonce, so a leaked message pre-empts no other report's
// check).
func (a *additive) kept(leader, _ []byte) []byte { return leader }

func (a *additive) resume(up *protocol.Upload, kept []byte) step {
	return a.follow([]*protocol.Upload{up}, [][]byte{kept})[0]
}

func (a *additive) conclude(states []any, answers [][]byte) []step {
	return a.pool.each(len(states), func(srv *verify.Server, j int) step {
		if states[j] == nil {
			return step{}
		}
		out, err := srv.Finish(states[j].(*verify.Pending), answers[j])
		return step{state: out, err: err}
	})
}

// verifiedDCF is the verified DCF backend's scheme (internal/vdcf), two
// rounds: the helper answers with both its messages (its second computed
// from the leader's first), the leader decides from them and sends its
// second in Decide, from which the helper decides. Its aggregate is over
// F_p: each server's share of the count and label prefix sums.
type verifiedDCF struct {
	dcfSum // the aggregate of the accepted reports
	sch    *vdcf.Scheme
	srv    *vdcf.Server // stateless: safe for concurrent use
	// cpu is the CPU time of the per-key work — each key's field walk
	// and its sketch — from the working threads' clocks (KeyWalkCPU).
	cpu walkClock
}

// dcfSum is an aggregate of verified DCF outputs (prefix vectors).
type dcfSum struct {
	bins int
	comp []payload.Component // the components folded: Count, Label[, Probability]
	agg  *vdcf.Aggregate     // over comp
	// less, if not nil, is subtracted from agg when read (foldedSums:
	// the outputs of reports folded but not in the release).
	less *vdcf.Aggregate
	// n is the number of reports added: the replays are refused by
	// report ID before (verified.decide, verified.hold), so that a
	// server keeps one set of IDs per report, not two.
	n int
}

// dcfState is a verified DCF report between its messages: the pending
// verification and the report's summed prefixes (vdcf.Prepared.Summed:
// its output if accepted).
type dcfState struct {
	p   *vdcf.Pending
	vec []fss.Fp
}

func newVDCF(bins int, prob bool, role Role, key [verify.KeySize]byte) (*verifiedDCF, error) {
	sch, err := vdcf.New(bins)
	if prob {
		sch, err = vdcf.NewWithProbability(bins)
	}
	if err != nil {
		return nil, err
	}
	comp := sch.Summed()
	srv, err := sch.NewServer(int(role), key)
	if err != nil {
		return nil, err
	}
	agg, err := sch.NewAggregate(comp)
	if err != nil {
		return nil, err
	}
	return &verifiedDCF{dcfSum: dcfSum{bins: bins, comp: comp, agg: agg}, sch: sch, srv: srv}, nil
}

// fresh returns an empty aggregate.
func (v *verifiedDCF) fresh() (aggregator, error) {
	agg, err := v.sch.NewAggregate(v.comp)
	return &dcfSum{bins: v.bins, comp: v.comp, agg: agg}, err
}

func (v *verifiedDCF) check(up *protocol.Upload) error {
	_, err := v.srv.DecodeShare(up.Share)
	return err
}

// prepare decodes this server's shares of ups, evaluates the keys of
// those that decode together and sketches each as the walk goes
// (vdcf.Server.PrepareAll): per report, a *dcfState and the first
// message. Chunks of walkKeys keys, which fss walks in lockstep on the
// calling goroutine, go to one core each, timed by its thread's clock
// (cpu).
func (v *verifiedDCF) prepare(ups []*protocol.Upload) []step {
	steps := make([]step, len(ups))
	var shares []*vdcf.Share
	var nonces [][vdcf.NonceSize]byte
	var idx []int
	for j, up := range ups {
		sh, err := v.srv.DecodeShare(up.Share)
		if err != nil {
			steps[j].err = err
			continue
		}
		shares, nonces, idx = append(shares, sh), append(nonces, up.Report), append(idx, j)
	}
	chunks := (len(shares) + walkKeys - 1) / walkKeys
	parallel(chunks, func(c int) {
		lo, hi := c*walkKeys, min((c+1)*walkKeys, len(shares))
		v.cpu.time(func() {
			prepared, err := v.srv.PrepareAll(nonces[lo:hi], shares[lo:hi])
			for k := lo; k < hi; k++ {
				j := idx[k]
				if err != nil { // keys that decoded for this grid always evaluate
					steps[j].err = err
					continue
				}
				pr := prepared[k-lo]
				steps[j] = step{&dcfState{p: pr.Pending, vec: pr.Summed}, pr.Message, nil}
			}
		})
	})
	return steps
}

func (v *verifiedDCF) lead(ups []*protocol.Upload) []step { return v.prepare(ups) }

// follow answers with both the helper's messages.
func (v *verifiedDCF) follow(ups []*protocol.Upload, leader [][]byte) []step {
	return exchanged(v.prepare(ups), leader)
}

// exchanged appends to each prepared report's first message its second,
// from the leader's first (vdcf.Pending.Exchange).
func exchanged(steps []step, leader [][]byte) []step {
	for j := range steps {
		if steps[j].err != nil {
			continue
		}
		second, err := steps[j].state.(*dcfState).p.Exchange(leader[j])
		steps[j].msg, steps[j].err = append(steps[j].msg, second...), err
	}
	return steps
}

// kept is the helper's own second message, its shares of the check
// values, not the leader's first: a stolen store then holds none of the
// leader's openings (internal/vdcf, "Soundness across reports").
func (v *verifiedDCF) kept(_, answer []byte) []byte { return answer[v.sch.Message1Size():] }

// resume prepares the report again (its first message) and resumes the
// verification with the second message kept (vdcf.Pending.Resume).
func (v *verifiedDCF) resume(up *protocol.Upload, kept []byte) step {
	st := v.prepare([]*protocol.Upload{up})[0]
	if st.err != nil {
		return st
	}
	if err := st.state.(*dcfState).p.Resume(kept); err != nil {
		return step{err: err}
	}
	st.msg = append(st.msg, kept...)
	return st
}

func (v *verifiedDCF) conclude(states []any, answers [][]byte) []step {
	steps := make([]step, len(states))
	for j, state := range states {
		if state != nil {
			steps[j] = v.concludeOne(state.(*dcfState), answers[j])
		}
	}
	return steps
}

// concludeOne decides one report at the leader: its second message from
// the helper's first, the decision from the helper's second.
func (v *verifiedDCF) concludeOne(st *dcfState, answer []byte) step {
	if len(answer) != v.sch.Message1Size()+vdcf.Message2Size {
		return step{err: fmt.Errorf("%w: the helper's answer has %d bytes, want %d", verify.ErrMalformed, len(answer), v.sch.Message1Size()+vdcf.Message2Size)}
	}
	second, err := st.p.Exchange(answer[:v.sch.Message1Size()])
	if err == nil {
		err = st.p.Finish(answer[v.sch.Message1Size():])
	}
	if err != nil {
		return step{err: err}
	}
	return step{st.vec, second, nil}
}

// settle decides on a copy of the pending verification, so that a
// Decide retried after a failed save settles the same way again.
func (v *verifiedDCF) settle(state any, leaderMsg []byte) (any, error) {
	st := state.(*dcfState)
	p := *st.p
	if err := p.Finish(leaderMsg); err != nil {
		return nil, err
	}
	return st.vec, nil
}

// add adds the report's count, label (and probability) prefix shares,
// its summed prefixes (vdcf.Prepared.Summed); an output of nil counts a
// report whose shares are in a fold instead (Config.Preparations).
func (v *dcfSum) add(_ payload.ReportID, out any) error {
	if vec, ok := out.([]fss.Fp); ok && vec != nil {
		if err := v.agg.AddSummed(vec); err != nil {
			return err
		}
	}
	v.n++
	return nil
}

func (v *dcfSum) accepted() int { return v.n }

// rederive evaluates the report's key again: its summed prefixes
// (vdcf.Server.EvaluateSummed).
func (v *verifiedDCF) rederive(up *protocol.Upload) (any, error) {
	sh, err := v.srv.DecodeShare(up.Share)
	if err != nil {
		return nil, err
	}
	var vecs [][]fss.Fp
	v.cpu.time(func() { vecs, err = v.srv.EvaluateSummed([]*vdcf.Share{sh}) })
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// sums sets the release's sums, elements of F_p held as uint64: the
// not-label prefixes are count − label.
func (v *dcfSum) sums(rel *release) error {
	out := make(map[payload.Component][]uint64, len(rel.components))
	for _, c := range rel.components {
		want := []payload.Component{c}
		if c == payload.NotLabel {
			want = []payload.Component{payload.Count, payload.Label}
		}
		var at [2]int // indices in v.comp of want
		for w, wc := range want {
			if at[w] = slices.Index(v.comp, wc); at[w] < 0 {
				return fmt.Errorf("component %v is not carried by this dataset's verified reports", c)
			}
		}
		s := make([]uint64, v.bins)
		for j := range s {
			x := v.sum(at[0], j)
			if c == payload.NotLabel {
				x = x.Sub(v.sum(at[1], j))
			}
			s[j] = uint64(x)
		}
		out[c] = s
	}
	rel.sums = out
	return nil
}

// sum is the aggregate's sum at prefix j of its k-th component, less
// that of less.
func (v *dcfSum) sum(k, j int) fss.Fp {
	x := v.agg.Sum(k, j)
	if v.less != nil {
		x = x.Sub(v.less.Sum(k, j))
	}
	return x
}
