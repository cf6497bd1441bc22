package server

import (
	"fmt"

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
	srv *verify.Server // decoding only: safe for concurrent use
	agg *verify.Aggregate
}

// additiveWorker prepares and decides on its own verify.Server.
type additiveWorker struct{ srv *verify.Server }

func newAdditive(bins int, role Role, key [verify.KeySize]byte) (*additive, additiveWorker, error) {
	sch, err := verify.New(bins)
	if err != nil {
		return nil, additiveWorker{}, err
	}
	srv, err := sch.NewServer(int(role), key)
	if err != nil {
		return nil, additiveWorker{}, err
	}
	return &additive{srv: srv, agg: sch.NewAggregate()}, additiveWorker{srv}, nil
}

func (a *additive) check(up *protocol.Upload) error { return a.srv.Check(up.Public, up.Share) }

// settle returns the output the helper computed when it answered.
func (a *additive) settle(state any, _ []byte) (any, error) { return state, nil }

func (a *additive) add(id payload.ReportID, out any) error {
	return a.agg.Add(id, out.(*verify.Output))
}

func (a *additive) accepted() int { return a.agg.Len() }

func (a *additive) sums(rel *release) error {
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

func (w additiveWorker) lead(up *protocol.Upload) (any, []byte, error) {
	return w.srv.Prepare(up.Report, up.Public, up.Share)
}

// follow prepares and decides at once: the state is the output.
func (w additiveWorker) follow(up *protocol.Upload, leaderMsg []byte) (any, []byte, error) {
	p, msg, err := w.srv.Prepare(up.Report, up.Public, up.Share)
	if err != nil {
		return nil, nil, err
	}
	out, err := w.srv.Finish(p, leaderMsg)
	return out, msg, err
}

func (w additiveWorker) conclude(state any, answer []byte) (any, []byte, error) {
	out, err := w.srv.Finish(state.(*verify.Pending), answer)
	return out, nil, err
}

// verifiedDCF is the verified DCF backend's scheme (internal/vdcf), two
// rounds: the helper answers with both its messages (its second computed
// from the leader's first), the leader decides from them and sends its
// second in Decide, from which the helper decides. Its aggregate is over
// F_p: each server's share of the count and label prefix sums.
type verifiedDCF struct {
	srv  *vdcf.Server // stateless: safe for concurrent use
	bins int
	agg  []fss.Fp // agg[j·2 + c], c = Count, Label
	seen map[payload.ReportID]bool
}

// dcfState is a verified DCF report between its messages: the pending
// verification and the report's prefix vector (its output if accepted).
type dcfState struct {
	p   *vdcf.Pending
	vec []fss.Fp
}

func newVDCF(bins int, role Role, key [verify.KeySize]byte) (*verifiedDCF, *verifiedDCF, error) {
	sch, err := vdcf.New(bins)
	if err != nil {
		return nil, nil, err
	}
	srv, err := sch.NewServer(int(role), key)
	if err != nil {
		return nil, nil, err
	}
	v := &verifiedDCF{srv: srv, bins: bins, agg: make([]fss.Fp, 2*bins), seen: make(map[payload.ReportID]bool)}
	return v, v, nil
}

func (v *verifiedDCF) check(up *protocol.Upload) error {
	_, err := v.srv.DecodeShare(up.Share)
	return err
}

// prepare decodes, evaluates and sketches this server's share of up.
func (v *verifiedDCF) prepare(up *protocol.Upload) (*dcfState, []byte, error) {
	sh, err := v.srv.DecodeShare(up.Share)
	if err != nil {
		return nil, nil, err
	}
	vecs, err := v.srv.Evaluate([]*vdcf.Share{sh})
	if err != nil {
		return nil, nil, err
	}
	p, msg, err := v.srv.Prepare(up.Report, sh, vecs[0])
	return &dcfState{p: p, vec: vecs[0]}, msg, err
}

func (v *verifiedDCF) lead(up *protocol.Upload) (any, []byte, error) {
	return v.prepare(up)
}

// follow answers with both the helper's messages.
func (v *verifiedDCF) follow(up *protocol.Upload, leaderMsg []byte) (any, []byte, error) {
	st, first, err := v.prepare(up)
	if err != nil {
		return nil, nil, err
	}
	second, err := st.p.Exchange(leaderMsg)
	if err != nil {
		return nil, nil, err
	}
	return st, append(first, second...), nil
}

func (v *verifiedDCF) conclude(state any, answer []byte) (any, []byte, error) {
	st := state.(*dcfState)
	if len(answer) != vdcf.Message1Size+vdcf.Message2Size {
		return nil, nil, fmt.Errorf("%w: the helper's answer has %d bytes, want %d", verify.ErrMalformed, len(answer), vdcf.Message1Size+vdcf.Message2Size)
	}
	second, err := st.p.Exchange(answer[:vdcf.Message1Size])
	if err != nil {
		return nil, nil, err
	}
	if err := st.p.Finish(answer[vdcf.Message1Size:]); err != nil {
		return nil, nil, err
	}
	return st.vec, second, nil
}

func (v *verifiedDCF) settle(state any, leaderMsg []byte) (any, error) {
	st := state.(*dcfState)
	if err := st.p.Finish(leaderMsg); err != nil {
		return nil, err
	}
	return st.vec, nil
}

// add adds the report's count and label prefix shares.
func (v *verifiedDCF) add(id payload.ReportID, out any) error {
	if v.seen[id] {
		return fmt.Errorf("%w: report %v counted already", verify.ErrReplay, id)
	}
	v.seen[id] = true
	vec := out.([]fss.Fp)
	for j := range v.bins {
		for c := range 2 {
			v.agg[2*j+c] = v.agg[2*j+c].Add(vec[j*vdcf.Components+c])
		}
	}
	return nil
}

func (v *verifiedDCF) accepted() int { return len(v.seen) }

// sums sets the release's sums, elements of F_p held as uint64: the
// not-label prefixes are count − label.
func (v *verifiedDCF) sums(rel *release) error {
	out := make(map[payload.Component][]uint64, len(rel.components))
	for _, c := range rel.components {
		if c != payload.Count && c != payload.Label && c != payload.NotLabel {
			return fmt.Errorf("component %v is not carried by verified reports", c)
		}
		s := make([]uint64, v.bins)
		for j := range s {
			x := v.agg[2*j+int(payload.Count)]
			switch c {
			case payload.Label:
				x = v.agg[2*j+int(payload.Label)]
			case payload.NotLabel:
				x = x.Sub(v.agg[2*j+int(payload.Label)])
			}
			s[j] = uint64(x)
		}
		out[c] = s
	}
	rel.sums = out
	return nil
}
