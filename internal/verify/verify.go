package verify

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"
	"github.com/cloudflare/circl/vdaf/prio3/histogram"

	"github.com/fedecdf/fedecdf/internal/errcode"
)

// Version names the report format and is bound into every proof as the
// Prio3 application context: reports made under another version fail
// verification instead of being misread.
const Version = "fedecdf/verify v1"

// NonceSize and KeySize are the sizes in bytes of a report's nonce and of
// the servers' shared verification key.
const (
	NonceSize = 16
	KeySize   = 32
)

// Rejection reasons; a report rejected at one server is rejected at both.
var (
	// ErrMalformed: a share or verifier message does not decode.
	ErrMalformed = errcode.New(errcode.ReportMalformed, "verify: malformed report")
	// ErrMismatch: a server's input share does not match the report's
	// public share (shares of different reports, or an altered share).
	ErrMismatch = errcode.New(errcode.ReportMismatch, "verify: share does not match report")
	// ErrProof: the proof does not verify; the measurement is not one-hot.
	ErrProof = errcode.New(errcode.ReportProof, "verify: proof rejected")
	// ErrReplay: the nonce was already counted in this aggregate.
	ErrReplay = errcode.New(errcode.ReportReplay, "verify: nonce already used")
)

// Reason is the short name of a rejection error for per-reason counts
// (malformed, mismatch, proof, replay).
func Reason(err error) string {
	for _, r := range []struct {
		err  error
		name string
	}{{ErrMalformed, "malformed"}, {ErrMismatch, "mismatch"}, {ErrProof, "proof"}, {ErrReplay, "replay"}} {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return "other"
}

// Scheme is Prio3Histogram over 2·bins buckets: bucket label·bins + bin.
type Scheme struct {
	h    *histogram.Histogram
	bins int
}

// New returns the scheme for a grid of bins bins (bins ≥ 1).
func New(bins int) (*Scheme, error) {
	if bins < 1 || bins > math.MaxInt32 {
		return nil, fmt.Errorf("verify: bins = %d: want 1 ≤ bins < 2^31", bins)
	}
	h, err := histogram.New(2, uint(2*bins), ChunkLength(2*bins), []byte(Version))
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return &Scheme{h: h, bins: bins}, nil
}

// ChunkLength is the gadget width for a histogram of length buckets:
// ⌈√length⌉, which balances the proof's wire seeds (2·chunk elements)
// against its gadget polynomial (≈ 4·length/chunk elements).
func ChunkLength(length int) uint {
	c := uint(math.Ceil(math.Sqrt(float64(length))))
	return max(c, 1)
}

// Bins is the number of bins of the grid.
func (s *Scheme) Bins() int { return s.bins }

// Report is one party's single upload: a nonce, the Prio3 public share
// (the joint-randomness parts) and one input share per server.
type Report struct {
	Nonce  [NonceSize]byte
	Public []byte
	Shares [2][]byte // leader (measurement and proof shares), helper (seeds)
}

// Encode shards the record (bin, label) into a report for the two servers,
// drawing the nonce and the sharding randomness from rnd.
func (s *Scheme) Encode(bin int, label bool, rnd io.Reader) (Report, error) {
	var nonce [NonceSize]byte
	if _, err := io.ReadFull(rnd, nonce[:]); err != nil {
		return Report{}, fmt.Errorf("verify: nonce: %w", err)
	}
	return s.EncodeAt(nonce, bin, label, rnd)
}

// EncodeAt is Encode with the nonce given: a party uses its report ID, so
// that the servers' deduplication by report ID is the Prio3 nonce's.
func (s *Scheme) EncodeAt(nonce [NonceSize]byte, bin int, label bool, rnd io.Reader) (Report, error) {
	r := Report{Nonce: nonce}
	if bin < 0 || bin >= s.bins {
		return r, fmt.Errorf("verify: bin %d outside the grid [0, %d)", bin, s.bins)
	}
	params := s.h.Params()
	seed := make([]byte, params.RandSize())
	if _, err := io.ReadFull(rnd, seed); err != nil {
		return r, fmt.Errorf("verify: sharding randomness: %w", err)
	}
	bucket := uint64(bin)
	if label {
		bucket += uint64(s.bins)
	}
	hn := histogram.Nonce(nonce)
	pub, shares, err := s.h.Shard(bucket, &hn, seed)
	if err != nil {
		return r, fmt.Errorf("verify: shard: %w", err)
	}
	r.Public = pub
	for i := range shares {
		if r.Shares[i], err = shares[i].MarshalBinary(); err != nil {
			return r, fmt.Errorf("verify: share %d: %w", i, err)
		}
	}
	return r, nil
}

// Server is one server's side of the verification: its index (0 leader,
// 1 helper) and the verification key it shares with the other server and
// keeps secret from parties.
// It runs one Prepare or Finish at a time (circl's Prio3 keeps one XOF
// state per Scheme): verify in parallel on Servers of separate Schemes.
// Check is safe for concurrent use.
type Server struct {
	s   *Scheme
	id  uint8
	key histogram.VerifyKey
}

// NewServer returns server id (0 or 1) with the shared key.
func (s *Scheme) NewServer(id int, key [KeySize]byte) (*Server, error) {
	if id != 0 && id != 1 {
		return nil, fmt.Errorf("verify: server id %d: want 0 (leader) or 1 (helper)", id)
	}
	return &Server{s: s, id: uint8(id), key: histogram.VerifyKey(key)}, nil
}

// Check decodes this server's input share and the public share of a
// report as Prepare would, without the verification: what a server checks
// on upload. Its error matches ErrMalformed.
func (v *Server) Check(public, share []byte) error {
	params := v.s.h.Params()
	var in histogram.InputShare
	in.New(&params, uint(v.id))
	if err := in.UnmarshalBinary(share); err != nil {
		return fmt.Errorf("%w: input share: %v", ErrMalformed, err)
	}
	var pub histogram.PublicShare
	pub.New(&params)
	if err := pub.UnmarshalBinary(public); err != nil {
		return fmt.Errorf("%w: public share: %v", ErrMalformed, err)
	}
	return nil
}

// Pending is a server's state between Prepare and Finish.
type Pending struct {
	state *histogram.PrepState
	own   histogram.PrepShare
}

// Prepare runs Prio3 preparation on this server's input share: it checks
// the share against the public share and returns the verifier message to
// send to the other server.
func (v *Server) Prepare(nonce [NonceSize]byte, public, share []byte) (*Pending, []byte, error) {
	params := v.s.h.Params()
	var in histogram.InputShare
	in.New(&params, uint(v.id))
	if err := in.UnmarshalBinary(share); err != nil {
		return nil, nil, fmt.Errorf("%w: input share: %v", ErrMalformed, err)
	}
	n := histogram.Nonce(nonce)
	state, prep, err := v.s.h.PrepInit(&v.key, &n, v.id, public, in)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMismatch, err)
	}
	msg, err := prep.MarshalBinary()
	if err != nil {
		return nil, nil, fmt.Errorf("verify: verifier message: %w", err)
	}
	return &Pending{state: state, own: *prep}, msg, nil
}

// Finish combines this server's verifier message with the peer's and, if
// the proof verifies, returns the server's output share of the one-hot
// histogram. Both servers compute the same decision from the same two
// messages.
func (v *Server) Finish(p *Pending, peer []byte) (*Output, error) {
	params := v.s.h.Params()
	var other histogram.PrepShare
	other.New(&params)
	if err := other.UnmarshalBinary(peer); err != nil {
		return nil, fmt.Errorf("%w: verifier message: %v", ErrMalformed, err)
	}
	shares := []histogram.PrepShare{p.own, other}
	if v.id == 1 {
		shares[0], shares[1] = other, p.own
	}
	msg, err := v.s.h.PrepSharesToPrep(shares)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProof, err)
	}
	out, err := v.s.h.PrepNext(p.state, msg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProof, err)
	}
	return &Output{share: out}, nil
}

// Rederive returns this server's output share of a report it accepted
// before, from its stored input share alone: what a restarted server
// needs to rebuild its aggregate from its stored uploads and verdicts
// without the other server. It runs preparation (PrepInit, which checks
// the share against the public share: ErrMismatch otherwise) and
// completes it with the joint randomness it derived itself, so it does
// not check the proof: call it only for a report whose accepted verdict
// both servers reached with Prepare and Finish.
func (v *Server) Rederive(nonce [NonceSize]byte, public, share []byte) (*Output, error) {
	p, _, err := v.Prepare(nonce, public, share)
	if err != nil {
		return nil, err
	}
	raw, err := p.state.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("verify: preparation state: %w", err)
	}
	// The state is the output share followed by the corrected joint
	// randomness seed, which is the preparation message of an accepted
	// report.
	params := v.s.h.Params()
	var msg histogram.PrepMessage
	msg.New(&params)
	seed := raw[len(raw)-seedSize:]
	if err := msg.UnmarshalBinary(seed); err != nil {
		return nil, fmt.Errorf("verify: joint randomness: %w", err)
	}
	out, err := v.s.h.PrepNext(p.state, &msg)
	if err != nil {
		return nil, fmt.Errorf("verify: rederiving an output share: %w", err)
	}
	return &Output{share: out}, nil
}

// seedSize is the size of a Prio3 XOF seed (draft-irtf-cfrg-vdaf-13
// §6.2: SEED_SIZE = 32 for XofTurboShake128).
const seedSize = 32

// Output is one server's output share of one verified report.
type Output struct{ share *histogram.OutShare }

// VerifyPair runs both servers' verification of r in process, exchanging
// the verifier messages directly. It returns both output shares, or the
// first server's rejection, in which case neither server counts r.
func VerifyPair(leader, helper *Server, r Report) ([2]*Output, error) {
	var outs [2]*Output
	srv := [2]*Server{leader, helper}
	var pend [2]*Pending
	var msgs [2][]byte
	for i := range srv {
		var err error
		if pend[i], msgs[i], err = srv[i].Prepare(r.Nonce, r.Public, r.Shares[i]); err != nil {
			return outs, err
		}
	}
	for i := range srv {
		var err error
		if outs[i], err = srv[i].Finish(pend[i], msgs[1-i]); err != nil {
			return [2]*Output{}, err
		}
	}
	return outs, nil
}

// Aggregate is one server's sum of the output shares of the verified
// reports of a report set.
type Aggregate struct {
	s    *Scheme
	sum  histogram.AggShare
	seen map[[NonceSize]byte]bool
}

// NewAggregate returns an empty aggregate share.
func (s *Scheme) NewAggregate() *Aggregate {
	return &Aggregate{s: s, sum: s.h.AggregateInit(), seen: map[[NonceSize]byte]bool{}}
}

// Add counts a verified report's output share; a nonce counted before is
// refused with ErrReplay (the other server refuses it too, as it sees the
// same nonces).
func (a *Aggregate) Add(nonce [NonceSize]byte, out *Output) error {
	if a.seen[nonce] {
		return ErrReplay
	}
	a.seen[nonce] = true
	a.s.h.AggregateUpdate(&a.sum, out.share)
	return nil
}

// Len is the number of reports counted.
func (a *Aggregate) Len() int { return len(a.seen) }

// Prefixes is one server's additive shares, in the field of Prio3 (p ≈
// 2^128), of the prefix vectors of the count, label and 1 − label
// components: entry i is the share of Σ_{b ≤ i} of that component.
type Prefixes struct {
	Count, Label, NotLabel fp128.Vec
}

// Prefixes forms this server's shares of the prefix vectors from its
// aggregate histogram share, locally: prefix sums are linear.
func (a *Aggregate) Prefixes() (Prefixes, error) {
	raw, err := a.sum.MarshalBinary()
	if err != nil {
		return Prefixes{}, fmt.Errorf("verify: aggregate share: %w", err)
	}
	hist := make(fp128.Vec, 2*a.s.bins)
	if err := hist.UnmarshalBinary(raw); err != nil {
		return Prefixes{}, fmt.Errorf("verify: aggregate share: %w", err)
	}
	n := a.s.bins
	p := Prefixes{Count: make(fp128.Vec, n), Label: make(fp128.Vec, n), NotLabel: make(fp128.Vec, n)}
	var not, lab fp128.Fp
	for i := range n {
		not.AddAssign(&hist[i])
		lab.AddAssign(&hist[n+i])
		p.NotLabel[i], p.Label[i] = not, lab
		p.Count[i].Add(&not, &lab)
	}
	return p, nil
}

// Lift maps a signed integer into the field: x mod p.
func Lift(x int64) fp128.Fp {
	var f fp128.Fp
	if x >= 0 {
		_ = f.SetUint64(uint64(x)) // never fails
		return f
	}
	var m fp128.Fp
	_ = m.SetUint64(uint64(-x)) // −MinInt64 wraps to 2^63, as wanted
	f.Sub(&f, &m)
	return f
}

// Lower maps a field element back to a signed integer, the
// representative of x in (−p/2, p/2), as two's complement mod 2^64. It is
// the inverse of Lift, and of sums of Lifts, while the true value v has
// |v| < 2^64 (far below p/2 ≈ 2^127); an element whose representative
// does not fit is an error.
func Lower(x fp128.Fp) (uint64, error) {
	if v, err := x.GetUint64(); err == nil {
		return v, nil
	}
	var neg fp128.Fp
	neg.Sub(&neg, &x)
	m, err := neg.GetUint64()
	if err != nil {
		return 0, fmt.Errorf("verify: field element %v is not within 2^64 of 0", x)
	}
	return -m, nil
}

// Reveal adds the two servers' shares of a prefix vector and returns the
// counts; a value that does not fit in uint64 is an error.
func Reveal(a, b fp128.Vec) ([]uint64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("verify: share lengths %d and %d differ", len(a), len(b))
	}
	out := make([]uint64, len(a))
	for i := range a {
		var s fp128.Fp
		s.Add(&a[i], &b[i])
		v, err := s.GetUint64()
		if err != nil {
			return nil, fmt.Errorf("verify: prefix %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}
