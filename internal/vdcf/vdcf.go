package vdcf

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// Version names the report format and separates the servers' random
// coefficients of this scheme from every other use of their key: reports
// and messages of another version fail verification.
const Version = "fedecdf/vdcf v2"

// NonceSize and KeySize are the sizes in bytes of a report's nonce and of
// the verification key the two servers share.
const (
	NonceSize = 16
	KeySize   = 32
)

// Components is m, the number of field components of a report's DCF
// payload: payload.Count and payload.Label at their payload indices, then
// MAC. The not-label prefixes are Count − Label, formed by the servers.
const Components = 3

// MAC is the index of the third component, κ₁ + κ₂·y: the MAC that binds
// the count and label shares to the party's secret κ (package doc).
const MAC = 2

// The party's correlated randomness, per server: additive shares of
// a₁, a₁², a₂, a₂(a₁ − a₂), κ₁, κ₂, κ₁a₁ + κ₂a₂.
const (
	corrA1 = iota
	corrC1
	corrA2
	corrC2
	corrK1
	corrK2
	corrMu
	corrLen
)

// Sizes of the two messages each server sends per report: the masked
// openings (d₁, d₂), then its share of the check value z.
const (
	Message1Size = 2 * 8
	Message2Size = 8
)

// Scheme is the verifiable DCF over a grid of bins.
type Scheme struct {
	dom  fss.PrefixDomain
	bins int
}

// New returns the scheme for a grid of bins ≥ 1 bins.
func New(bins int) (*Scheme, error) {
	dom, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return nil, fmt.Errorf("vdcf: %w", err)
	}
	return &Scheme{dom: dom, bins: bins}, nil
}

// Bins is the number of bins of the grid.
func (s *Scheme) Bins() int { return s.bins }

// ShareSize is the length in bytes of one server's share of a report: its
// field DCF key and its correlated randomness.
func (s *Scheme) ShareSize() int { return fss.EncodedSize(s.dom.Bits(), Components) + 8*corrLen }

// Report is one party's single upload: a nonce and one share per server
// (0 leader, 1 helper). In a deployment the nonce is the report ID.
type Report struct {
	Nonce  [NonceSize]byte
	Shares [2][]byte
}

// Encode makes the report of the record (bin, label), drawing the nonce,
// the keys' seeds and the correlated randomness from rnd.
func (s *Scheme) Encode(bin int, label bool, rnd io.Reader) (Report, error) {
	r, err := s.encode(bin, []fss.Fp{1, labelValue(label)}, rnd)
	if err != nil {
		return Report{}, fmt.Errorf("vdcf: %w", err)
	}
	return r, nil
}

// EncodeAt is Encode under a given nonce, a party's report ID in a
// deployment; the nonce is not bound into the keys or the correlated
// randomness, only into the servers' challenge.
func (s *Scheme) EncodeAt(nonce [NonceSize]byte, bin int, label bool, rnd io.Reader) (Report, error) {
	r, err := s.Encode(bin, label, rnd)
	r.Nonce = nonce
	return r, err
}

// labelValue is the label bit as a field element.
func labelValue(label bool) fss.Fp {
	if label {
		return 1
	}
	return 0
}

// encode makes a report whose DCF payload at bin is (β_Count, β_Label,
// κ₁β_Count + κ₂β_Label): Encode for β = (1, y), and the invalid payloads
// of the tests with a consistent MAC.
func (s *Scheme) encode(bin int, beta []fss.Fp, rnd io.Reader) (Report, error) {
	var r Report
	if bin < 0 || bin >= s.bins {
		return r, fmt.Errorf("bin %d outside the grid [0, %d)", bin, s.bins)
	}
	if _, err := io.ReadFull(rnd, r.Nonce[:]); err != nil {
		return r, fmt.Errorf("nonce: %w", err)
	}
	var draw [4]fss.Fp
	for i := range draw {
		var err error
		if draw[i], err = randomElement(rnd); err != nil {
			return r, fmt.Errorf("correlated randomness: %w", err)
		}
	}
	a1, a2, k1, k2 := draw[0], draw[1], draw[2], draw[3]
	corr := [corrLen]fss.Fp{
		corrA1: a1, corrC1: a1.Mul(a1), corrA2: a2, corrC2: a2.Mul(a1.Sub(a2)),
		corrK1: k1, corrK2: k2, corrMu: k1.Mul(a1).Add(k2.Mul(a2)),
	}
	full := append(beta[:2:2], k1.Mul(beta[payload.Count]).Add(k2.Mul(beta[payload.Label])))
	keys, err := s.genKeys(bin, full, rnd)
	if err != nil {
		return r, err
	}
	var shares [2][corrLen]fss.Fp
	for i := range corr {
		if shares[0][i], err = randomElement(rnd); err != nil {
			return r, fmt.Errorf("correlated randomness: %w", err)
		}
		shares[1][i] = corr[i].Sub(shares[0][i])
	}
	for b := range r.Shares {
		r.Shares[b] = appendElements(keys[b], shares[b][:])
	}
	return r, nil
}

// genKeys returns the two servers' encoded DCF keys for β at bin.
func (s *Scheme) genKeys(bin int, beta []fss.Fp, rnd io.Reader) ([2][]byte, error) {
	var out [2][]byte
	k0, k1, err := s.dom.GenField(bin, beta, rnd)
	if err != nil {
		return out, err
	}
	for b, k := range []*fss.FieldKey{k0, k1} {
		if out[b], err = k.MarshalBinary(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// randomElement draws a uniform field element by rejection sampling of
// 64-bit little-endian words (a word is rejected with probability below
// 2^-32).
func randomElement(rnd io.Reader) (fss.Fp, error) {
	var b [8]byte
	for {
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return 0, err
		}
		if x := fss.Fp(binary.LittleEndian.Uint64(b[:])); x.Valid() {
			return x, nil
		}
	}
}

// appendElements appends the field elements to b, 8 little-endian bytes
// each.
func appendElements(b []byte, xs []fss.Fp) []byte {
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

// readElements decodes len(xs) canonical field elements from b, which must
// have exactly that length.
func readElements(b []byte, xs []fss.Fp) error {
	if len(b) != 8*len(xs) {
		return fmt.Errorf("%d bytes, want %d", len(b), 8*len(xs))
	}
	for i := range xs {
		xs[i] = fss.Fp(binary.LittleEndian.Uint64(b[8*i:]))
		if !xs[i].Valid() {
			return fmt.Errorf("element %d = %d is not below the modulus", i, uint64(xs[i]))
		}
	}
	return nil
}

// Server is one server's side of the verification: its index (0 leader,
// 1 helper) and the verification key it shares with the other server and
// keeps secret from parties.
type Server struct {
	s   *Scheme
	id  int
	key [KeySize]byte
}

// NewServer returns server id (0 or 1) with the shared key.
func (s *Scheme) NewServer(id int, key [KeySize]byte) (*Server, error) {
	if id != 0 && id != 1 {
		return nil, fmt.Errorf("vdcf: server id %d: want 0 (leader) or 1 (helper)", id)
	}
	return &Server{s: s, id: id, key: key}, nil
}

// Share is one server's decoded share of a report.
type Share struct {
	key  *fss.FieldKey
	corr [corrLen]fss.Fp
}

// DecodeShare decodes this server's share of a report. Undecodable bytes
// match verify.ErrMalformed; a well-formed key for the other server or for
// another grid matches verify.ErrMismatch.
func (v *Server) DecodeShare(b []byte) (*Share, error) {
	keyLen := v.s.ShareSize() - 8*corrLen
	if len(b) != v.s.ShareSize() {
		return nil, fmt.Errorf("vdcf: %w: share of %d bytes, want %d for %d bins", verify.ErrMalformed, len(b), v.s.ShareSize(), v.s.bins)
	}
	key, err := fss.DecodeField(b[:keyLen])
	if err != nil {
		return nil, fmt.Errorf("vdcf: %w: %v", verify.ErrMalformed, err)
	}
	if key.Party() != v.id || key.Bits() != v.s.dom.Bits() || key.Components() != Components {
		return nil, fmt.Errorf("vdcf: %w: key for server %d with n = %d, m = %d; this is server %d of a grid with n = %d, m = %d",
			verify.ErrMismatch, key.Party(), key.Bits(), key.Components(), v.id, v.s.dom.Bits(), Components)
	}
	sh := &Share{key: key}
	if err := readElements(b[keyLen:], sh.corr[:]); err != nil {
		return nil, fmt.Errorf("vdcf: %w: correlated randomness: %v", verify.ErrMalformed, err)
	}
	return sh, nil
}

// Evaluate returns, per share, this server's share of the report's prefix
// vector: out[i][j·Components + c] is its share of β_c·1[bin ≤ j] for
// every prefix j < bins (fss.PrefixDomain.FieldPrefixes, one tree walk per
// key, keys in lockstep).
func (v *Server) Evaluate(shares []*Share) ([][]fss.Fp, error) {
	keys := make([]*fss.FieldKey, len(shares))
	out := make([][]fss.Fp, len(shares))
	for i, sh := range shares {
		keys[i] = sh.key
		out[i] = make([]fss.Fp, v.s.bins*Components)
	}
	if err := v.s.dom.FieldPrefixes(keys, out); err != nil {
		return nil, fmt.Errorf("vdcf: %w", err)
	}
	return out, nil
}

// coefficients are the servers' combination coefficients of one report,
// ρ₁, ρ₂, ρ₃ (nonzero); the challenge vector r is drawn, after them, from
// the same stream by sketchOf.
type coefficients struct {
	rho    [3]fss.Fp
	stream *rand.ChaCha8
}

// challenge derives the challenge of the report with the nonce from the
// servers' key: ChaCha8 seeded with SHA-256(Version ‖ 0 ‖ key ‖ nonce),
// 64-bit words rejection-sampled into F_p: ρ₁, ρ₂, ρ₃ (each redrawn while
// zero), then r_{N−1}, r_{N−2}, …, r_0.
func (v *Server) challenge(nonce [NonceSize]byte) coefficients {
	h := sha256.New()
	h.Write([]byte(Version))
	h.Write([]byte{0})
	h.Write(v.key[:])
	h.Write(nonce[:])
	var seed [32]byte
	h.Sum(seed[:0])
	c := coefficients{stream: rand.NewChaCha8(seed)}
	for i := range c.rho {
		for c.rho[i] == 0 {
			c.rho[i] = c.next()
		}
	}
	return c
}

// next draws a uniform field element from the stream.
func (c *coefficients) next() fss.Fp {
	for {
		if x := fss.Fp(c.stream.Uint64()); x.Valid() {
			return x
		}
	}
}

// sketch is one server's share of the report's sketch: ⟨r, Δv⟩ for the
// three components, ⟨r∘r, ΔCount⟩ and the total count.
type sketch struct {
	x     [Components]fss.Fp
	q     fss.Fp
	total fss.Fp
}

// sketchOf draws r from the challenge stream and computes the sketch of a
// prefix vector in one pass from the last prefix down, with
// ⟨r, ΔP⟩ = Σ_j (r_j − r_{j+1})·P(j) and ⟨r∘r, ΔP⟩ = Σ_j (r_j² − r_{j+1}²)·P(j)
// (r_N = 0), reducing each accumulated sum once.
func sketchOf(c *coefficients, prefixes []fss.Fp) sketch {
	var acc [Components + 1]wide
	var rNext, sqNext fss.Fp // r_{j+1}, r_{j+1}²
	for j := len(prefixes)/Components - 1; j >= 0; j-- {
		r := c.next()
		sq := r.Mul(r)
		u, w := r.Sub(rNext), sq.Sub(sqNext)
		rNext, sqNext = r, sq
		row := prefixes[j*Components : (j+1)*Components]
		for k, p := range row {
			acc[k].addMul(u, p)
		}
		acc[Components].addMul(w, row[payload.Count])
	}
	var s sketch
	for k := range s.x {
		s.x[k] = acc[k].reduce()
	}
	s.q = acc[Components].reduce()
	s.total = prefixes[len(prefixes)-Components+int(payload.Count)]
	return s
}

// wide is an unreduced sum of 128-bit products: top·2^128 + hi·2^64 + lo.
type wide struct{ lo, hi, top uint64 }

func (a *wide) addMul(x, y fss.Fp) {
	ph, pl := bits.Mul64(uint64(x), uint64(y))
	var c uint64
	a.lo, c = bits.Add64(a.lo, pl, 0)
	a.hi, c = bits.Add64(a.hi, ph, c)
	a.top += c
}

// twoTo128 is 2^128 mod p = −2^32.
const twoTo128 = fss.Fp(fss.Modulus - 1<<32)

func (a *wide) reduce() fss.Fp {
	return fss.Fp(0).Add(fss.Fp(a.lo % fss.Modulus)).Add(fss.Fp(a.hi % fss.Modulus).Mul(fss.Fp(1<<32 - 1))).Add(fss.Fp(a.top % fss.Modulus).Mul(twoTo128))
}

// Pending is a server's state for one report between its messages.
type Pending struct {
	v     *Server
	coef  coefficients
	sk    sketch
	corr  [corrLen]fss.Fp
	open  [2]fss.Fp // own share of the openings (d₁, d₂)
	z     fss.Fp    // own share of the check value, once exchanged
	stage int
}

// Prepare starts the verification of one report from this server's share
// and its evaluated prefix vector (Evaluate): it derives the report's
// challenge from the key and the nonce, sketches the vector and returns
// the first message, the masked openings d₁ = ⟨r, ΔCount⟩ − a₁ and
// d₂ = ⟨r, ΔLabel⟩ − a₂ (Message1Size bytes).
func (v *Server) Prepare(nonce [NonceSize]byte, sh *Share, prefixes []fss.Fp) (*Pending, []byte, error) {
	if len(prefixes) != v.s.bins*Components {
		return nil, nil, fmt.Errorf("vdcf: prefix vector of %d elements, want %d bins × %d components", len(prefixes), v.s.bins, Components)
	}
	p := &Pending{v: v, coef: v.challenge(nonce), corr: sh.corr, stage: 1}
	p.sk = sketchOf(&p.coef, prefixes)
	p.open = [2]fss.Fp{
		p.sk.x[payload.Count].Sub(sh.corr[corrA1]),
		p.sk.x[payload.Label].Sub(sh.corr[corrA2]),
	}
	return p, appendElements(nil, p.open[:]), nil
}

// Exchange takes the other server's first message and returns this
// server's second: its share of the check value z (Message2Size bytes).
func (p *Pending) Exchange(peer []byte) ([]byte, error) {
	if p.stage != 1 {
		return nil, fmt.Errorf("vdcf: Exchange called at stage %d, want 1 (after Prepare)", p.stage)
	}
	var other [2]fss.Fp
	if err := readElements(peer, other[:]); err != nil {
		return nil, fmt.Errorf("vdcf: %w: first message: %v", verify.ErrMalformed, err)
	}
	p.stage = 2
	p.z = p.checkShare(p.open[0].Add(other[0]), p.open[1].Add(other[1]))
	return appendElements(nil, []fss.Fp{p.z}), nil
}

// checkShare returns this server's share of
//
//	z = (x₁² − ⟨r∘r, ΔCount⟩) + ρ₁·x₂(x₁ − x₂) + ρ₂·(Σ ΔCount − 1)
//	  + ρ₃·(κ₁x₁ + κ₂x₂ − ⟨r, ΔMAC⟩)
//
// with x₁ = ⟨r, ΔCount⟩, x₂ = ⟨r, ΔLabel⟩, from the opened d₁ = x₁ − a₁,
// d₂ = x₂ − a₂ (Beaver's multiplication; package doc, "Protocol").
func (p *Pending) checkShare(d1, d2 fss.Fp) fss.Fp {
	c, sk, rho := &p.corr, &p.sk, &p.coef.rho
	lead := fss.Fp(0) // the public terms go to the leader's share
	if p.v.id == 0 {
		lead = 1
	}
	e := d1.Sub(d2) // opening of x₁ − x₂, masked by a₁ − a₂
	two := fss.Fp(2)
	square := lead.Mul(d1.Mul(d1)).Add(two.Mul(d1).Mul(c[corrA1])).Add(c[corrC1])
	product := lead.Mul(d2.Mul(e)).Add(d2.Mul(c[corrA1].Sub(c[corrA2]))).Add(e.Mul(c[corrA2])).Add(c[corrC2])
	total := sk.total.Sub(lead)
	mac := c[corrK1].Mul(d1).Add(c[corrK2].Mul(d2)).Add(c[corrMu]).Sub(sk.x[MAC])
	return square.Sub(sk.q).Add(rho[0].Mul(product)).Add(rho[1].Mul(total)).Add(rho[2].Mul(mac))
}

// Finish takes the other server's second message and decides: nil when the
// two shares of z add up to 0 (the report is valid), an error matching
// verify.ErrProof otherwise. Both servers decide from the same two values,
// so they accept or reject together.
func (p *Pending) Finish(peer []byte) error {
	if p.stage != 2 {
		return fmt.Errorf("vdcf: Finish called at stage %d, want 2 (after Exchange)", p.stage)
	}
	p.stage = 3
	var other [1]fss.Fp
	if err := readElements(peer, other[:]); err != nil {
		return fmt.Errorf("vdcf: %w: second message: %v", verify.ErrMalformed, err)
	}
	if p.z.Add(other[0]) != 0 {
		return fmt.Errorf("vdcf: %w: the report does not encode one record", verify.ErrProof)
	}
	return nil
}

// VerifyPair runs both servers' verification of r in process, exchanging
// the messages directly. It returns both servers' prefix vectors
// (Evaluate) if both accept, else the first error; a rejection is the same
// at both servers.
func VerifyPair(leader, helper *Server, r Report) ([2][]fss.Fp, error) {
	var vecs [2][]fss.Fp
	srv := [2]*Server{leader, helper}
	var pend [2]*Pending
	var msg [2][]byte
	for i, v := range srv {
		sh, err := v.DecodeShare(r.Shares[i])
		if err != nil {
			return [2][]fss.Fp{}, err
		}
		out, err := v.Evaluate([]*Share{sh})
		if err != nil {
			return [2][]fss.Fp{}, err
		}
		vecs[i] = out[0]
		if pend[i], msg[i], err = v.Prepare(r.Nonce, sh, vecs[i]); err != nil {
			return [2][]fss.Fp{}, err
		}
	}
	var second [2][]byte
	for i := range srv {
		var err error
		if second[i], err = pend[i].Exchange(msg[1-i]); err != nil {
			return [2][]fss.Fp{}, err
		}
	}
	for i := range srv {
		if err := pend[i].Finish(second[1-i]); err != nil {
			return [2][]fss.Fp{}, err
		}
	}
	return vecs, nil
}

// Lift maps a signed integer into the field: x mod p (a server's noise,
// added to its share of a prefix sum).
func Lift(x int64) fss.Fp {
	if x >= 0 {
		return fss.Fp(uint64(x) % fss.Modulus)
	}
	return fss.Fp(uint64(-x) % fss.Modulus).Neg() // −MinInt64 wraps to 2^63, as wanted
}

// Lower maps a field element back to a signed integer, the
// representative of x in (−p/2, p/2), as two's complement mod 2^64. It is
// the inverse of Lift, and of sums of Lifts, while the true value v has
// |v| < p/2 ≈ 2^63: a count of at most 2^32 plus two noises each below
// 2^61 in magnitude.
func Lower(x fss.Fp) uint64 {
	if uint64(x) <= fss.Modulus/2 {
		return uint64(x)
	}
	return -uint64(x.Neg())
}
