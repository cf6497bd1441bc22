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
// coefficients of this scheme, and the expansion of the parties' seeds,
// from every other use of their key and seeds: reports and messages of
// another version fail verification.
const Version = "fedecdf/vdcf v4"

// NonceSize and KeySize are the sizes in bytes of a report's nonce and of
// the verification key the two servers share; SeedSize is the size of the
// seed in each server's share, from which it expands its shares of the
// correlated randomness (package doc, "Seeds").
const (
	NonceSize = 16
	KeySize   = 32
	SeedSize  = 16
)

// MAC is the index of the third component of a report's DCF payload,
// κ₁ + κ₂·y: the MAC that binds the count and label shares to the party's
// secret κ (package doc). payload.Count and payload.Label are the first
// two, at their payload indices; the not-label prefixes are Count −
// Label, formed by the servers.
const MAC = 2

// Probability is the index of the fourth component of a scheme that
// carries the probability (NewWithProbability): the party's fixed-point
// probability p ∈ [0, MaxProbability], payload.Probability's index too.
const Probability = 3

// MaxProbability is the largest probability a report carries:
// payload.ProbabilityScale, the fixed point of probability 1 (a party
// encodes round(p·2^32) ∈ [0, 2^32]).
const MaxProbability = payload.ProbabilityScale

// probBits is the number of bits of a probability's decomposition:
// p = Σ_{i<33} 2^i·b_i, with b_32 = 1 only for p = 2^32.
const probBits = 33

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

// The probability's correlated randomness, after the above in a scheme
// that carries it: shares of the bits b_i, their masks a'_i, MAC keys κ'_i
// and MACs κ'_i·b_i (probBits each), then Σ a'_i², a_p, a₁a_p, a'_32·a_p,
// κ_p and κ_p·p.
const (
	corrBits  = corrLen
	corrMasks = corrBits + probBits
	corrKeys  = corrMasks + probBits
	corrMacs  = corrKeys + probBits
	corrSq    = corrMacs + probBits
	corrAP    = corrSq + 1
	corrCP    = corrAP + 1
	corrCT    = corrCP + 1
	corrKP    = corrCT + 1
	corrMP    = corrKP + 1
	corrLenP  = corrMP + 1
)

// Message2Size is the size of the second message each server sends per
// report: its share of the check value z.
const Message2Size = 8

// Scheme is the verifiable DCF over a grid of bins.
type Scheme struct {
	dom  fss.PrefixDomain
	bins int
	prob bool // reports carry the probability
	// explicit[id] lists the determined correlated values whose share
	// server id receives explicitly (not expanded from its seed).
	explicit [2][]int
}

// New returns the scheme for a grid of bins ≥ 1 bins whose reports carry
// a record's count and label.
func New(bins int) (*Scheme, error) {
	dom, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return nil, fmt.Errorf("vdcf: %w", err)
	}
	s := &Scheme{dom: dom, bins: bins}
	s.split()
	return s, nil
}

// NewWithProbability is New for reports that also carry the record's
// fixed-point probability in [0, MaxProbability], verified in range and
// at the record's bin (package doc, "Probability").
func NewWithProbability(bins int) (*Scheme, error) {
	s, err := New(bins)
	if err != nil {
		return nil, err
	}
	s.prob = true
	s.split()
	return s, nil
}

// split assigns each determined correlated value's explicit share to one
// server: in layout order, alternately the helper and the leader, so that
// the two uploads differ by at most one field element.
func (s *Scheme) split() {
	s.explicit = [2][]int{}
	for k, i := range s.determined() {
		id := 1 - k%2
		s.explicit[id] = append(s.explicit[id], i)
	}
}

// determined lists, in layout order, the correlated values that the
// record and the free values fix: the triples' products, the MACs and
// μ, and the probability's bits. The others (the masks a and MAC keys κ)
// are free.
func (s *Scheme) determined() []int {
	d := []int{corrC1, corrC2, corrMu}
	if !s.prob {
		return d
	}
	for _, base := range []int{corrBits, corrMacs} {
		for i := range probBits {
			d = append(d, base+i)
		}
	}
	return append(d, corrSq, corrCP, corrCT, corrMP)
}

// Bins is the number of bins of the grid.
func (s *Scheme) Bins() int { return s.bins }

// HasProbability reports whether the scheme's reports carry the
// probability.
func (s *Scheme) HasProbability() bool { return s.prob }

// Components is m, the number of field components of a report's DCF
// payload and of each prefix of its vector (Server.Evaluate): Count,
// Label, MAC, and Probability if the scheme carries it.
func (s *Scheme) Components() int {
	if s.prob {
		return 4
	}
	return 3
}

// corrLen is the number of field elements of a share's correlated
// randomness.
func (s *Scheme) corrLen() int {
	if s.prob {
		return corrLenP
	}
	return corrLen
}

// openings is the number of masked openings each server sends: d₁, d₂,
// and with the probability d_p and one per bit.
func (s *Scheme) openings() int {
	if s.prob {
		return 3 + probBits
	}
	return 2
}

// Message1Size is the size of the first message each server sends per
// report: its shares of the masked openings.
func (s *Scheme) Message1Size() int { return 8 * s.openings() }

// ShareSize is the length in bytes of server id's share of a report (0
// leader, 1 helper): its field DCF key, its seed and its explicit shares of
// the determined correlated values.
func (s *Scheme) ShareSize(id int) int {
	return s.keySize() + SeedSize + 8*len(s.explicit[id])
}

// keySize is the length in bytes of a share's field DCF key, its prefix.
func (s *Scheme) keySize() int { return fss.EncodedSize(s.dom.Bits(), s.Components()) }

// Report is one party's single upload: a nonce and one share per server
// (0 leader, 1 helper). In a deployment the nonce is the report ID.
type Report struct {
	Nonce  [NonceSize]byte
	Shares [2][]byte
}

// Encode makes the report of the record (bin, label), drawing the nonce,
// the seeds and the keys' seeds from rnd. A scheme that carries the
// probability needs EncodeProbability.
func (s *Scheme) Encode(bin int, label bool, rnd io.Reader) (Report, error) {
	nonce, err := readNonce(rnd)
	if err != nil {
		return s.wrap(Report{}, err)
	}
	return s.EncodeAt(nonce, bin, label, rnd)
}

// EncodeProbability is Encode for a scheme that carries the probability:
// the record (bin, label, prob), prob the fixed-point probability in
// [0, MaxProbability].
func (s *Scheme) EncodeProbability(bin int, label bool, prob uint64, rnd io.Reader) (Report, error) {
	nonce, err := readNonce(rnd)
	if err != nil {
		return s.wrap(Report{}, err)
	}
	return s.EncodeProbabilityAt(nonce, bin, label, prob, rnd)
}

// EncodeAt is Encode under a given nonce, a party's report ID in a
// deployment. The nonce is bound into the expansion of the seeds and the
// servers' challenge: the report verifies under this nonce only.
func (s *Scheme) EncodeAt(nonce [NonceSize]byte, bin int, label bool, rnd io.Reader) (Report, error) {
	if s.prob {
		return Report{}, fmt.Errorf("vdcf: the scheme's reports carry a probability: encode with EncodeProbability")
	}
	return s.wrap(s.encode(nonce, plain{bin: bin, beta: []fss.Fp{1, labelValue(label)}}, rnd))
}

// EncodeProbabilityAt is EncodeProbability under a given nonce.
func (s *Scheme) EncodeProbabilityAt(nonce [NonceSize]byte, bin int, label bool, prob uint64, rnd io.Reader) (Report, error) {
	if !s.prob {
		return Report{}, fmt.Errorf("vdcf: the scheme's reports carry no probability: encode with Encode, or make the scheme with NewWithProbability")
	}
	if prob > MaxProbability {
		return Report{}, fmt.Errorf("vdcf: probability %d above %d (fixed point of 1)", prob, uint64(MaxProbability))
	}
	return s.wrap(s.encode(nonce, plain{bin: bin, beta: []fss.Fp{1, labelValue(label), fss.Fp(prob)}, bits: bitsOf(prob)}, rnd))
}

// readNonce draws a report's nonce from rnd.
func readNonce(rnd io.Reader) ([NonceSize]byte, error) {
	var nonce [NonceSize]byte
	if _, err := io.ReadFull(rnd, nonce[:]); err != nil {
		return nonce, fmt.Errorf("nonce: %w", err)
	}
	return nonce, nil
}

func (s *Scheme) wrap(r Report, err error) (Report, error) {
	if err != nil {
		return Report{}, fmt.Errorf("vdcf: %w", err)
	}
	return r, nil
}

// labelValue is the label bit as a field element.
func labelValue(label bool) fss.Fp {
	if label {
		return 1
	}
	return 0
}

// bitsOf is the probBits-bit decomposition of p, least significant first.
func bitsOf(p uint64) []fss.Fp {
	b := make([]fss.Fp, probBits)
	for i := range b {
		b[i] = fss.Fp(p >> i & 1)
	}
	return b
}

// plain is what a party encodes: the DCF payload β at bin — (count,
// label), and the probability in a scheme that carries it — and the
// probability's claimed decomposition. An honest party's is (1, y, p)
// and the bits of p; the forgeries of the tests put other values.
type plain struct {
	bin  int
	beta []fss.Fp
	bits []fss.Fp
}

// draft is a report being made: its nonce, the two servers' seeds, their
// shares expanded from them and the correlated values.
type draft struct {
	nonce [NonceSize]byte
	seeds [2][SeedSize]byte
	exp   [2][]fss.Fp
	corr  []fss.Fp
}

// encode makes the report under nonce whose DCF payload at bin is
// (β_Count, β_Label, κ₁β_Count + κ₂β_Label[, β_Probability]), with
// correlated randomness consistent with pl.
func (s *Scheme) encode(nonce [NonceSize]byte, pl plain, rnd io.Reader) (Report, error) {
	if pl.bin < 0 || pl.bin >= s.bins {
		return Report{}, fmt.Errorf("bin %d outside the grid [0, %d)", pl.bin, s.bins)
	}
	d, err := s.newDraft(nonce, rnd)
	if err != nil {
		return Report{}, err
	}
	s.correlated(d, pl)
	return s.assemble(d, pl, rnd)
}

// newDraft draws the two seeds from rnd and expands them under nonce; its
// correlated values are the free values, the sums of the two servers'
// expanded shares, until correlated sets the determined ones.
func (s *Scheme) newDraft(nonce [NonceSize]byte, rnd io.Reader) (*draft, error) {
	d := &draft{nonce: nonce, corr: make([]fss.Fp, s.corrLen())}
	for id := range d.seeds {
		if _, err := io.ReadFull(rnd, d.seeds[id][:]); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
		d.exp[id] = expand(id, d.seeds[id], nonce, len(d.corr))
	}
	for i := range d.corr {
		d.corr[i] = d.exp[0][i].Add(d.exp[1][i])
	}
	return d, nil
}

// expand is server id's expansion of its seed under nonce into n field
// elements: ChaCha8 keyed with SHA-256(Version ‖ 1 ‖ id ‖ seed ‖ nonce),
// 64-bit words rejection-sampled into F_p (package doc, "Seeds").
func expand(id int, seed [SeedSize]byte, nonce [NonceSize]byte, n int) []fss.Fp {
	h := sha256.New()
	h.Write([]byte(Version))
	h.Write([]byte{1, byte(id)})
	h.Write(seed[:])
	h.Write(nonce[:])
	var key [32]byte
	h.Sum(key[:0])
	st := rand.NewChaCha8(key)
	out := make([]fss.Fp, n)
	for i := range out {
		out[i] = next(st)
	}
	return out
}

// correlated sets the determined correlated values of d from its free
// values and pl (package doc, "Protocol" and "Probability").
func (s *Scheme) correlated(d *draft, pl plain) {
	corr := d.corr
	a1, a2, k1, k2 := corr[corrA1], corr[corrA2], corr[corrK1], corr[corrK2]
	corr[corrC1], corr[corrC2] = a1.Mul(a1), a2.Mul(a1.Sub(a2))
	corr[corrMu] = k1.Mul(a1).Add(k2.Mul(a2))
	if !s.prob {
		return
	}
	ap, kp := corr[corrAP], corr[corrKP]
	corr[corrCP], corr[corrCT] = a1.Mul(ap), corr[corrMasks+probBits-1].Mul(ap)
	corr[corrMP] = kp.Mul(pl.beta[2])
	corr[corrMu] = corr[corrMu].Add(kp.Mul(ap))
	corr[corrSq] = 0
	for i, b := range pl.bits {
		a, k := corr[corrMasks+i], corr[corrKeys+i]
		corr[corrBits+i], corr[corrMacs+i] = b, k.Mul(b)
		corr[corrSq] = corr[corrSq].Add(a.Mul(a))
		corr[corrMu] = corr[corrMu].Add(k.Mul(a))
	}
}

// assemble makes the report of d: the keys of the payload pl.beta with the
// MAC of d's κ₁, κ₂ at pl.bin, and each server's share, its key ‖ its seed
// ‖ its explicit shares (each determined value minus the other server's
// expanded share of it).
func (s *Scheme) assemble(d *draft, pl plain, rnd io.Reader) (Report, error) {
	r := Report{Nonce: d.nonce}
	k1, k2 := d.corr[corrK1], d.corr[corrK2]
	full := append([]fss.Fp{pl.beta[payload.Count], pl.beta[payload.Label]}, k1.Mul(pl.beta[payload.Count]).Add(k2.Mul(pl.beta[payload.Label])))
	if s.prob {
		full = append(full, pl.beta[2])
	}
	keys, err := s.genKeys(pl.bin, full, rnd)
	if err != nil {
		return r, err
	}
	for id := range r.Shares {
		b := append(keys[id], d.seeds[id][:]...)
		for _, i := range s.explicit[id] {
			b = binary.LittleEndian.AppendUint64(b, uint64(d.corr[i].Sub(d.exp[1-id][i])))
		}
		r.Shares[id] = b
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
// 1 helper), the verification key it shares with the other server and
// keeps secret from parties, and the challenge vector drawn from that key
// once, as the sketch's weights (package doc, "Soundness").
type Server struct {
	s   *Scheme
	id  int
	key [KeySize]byte
	// u_j = r_j − r_{j+1} and w_j = r_j² − r_{j+1}² (r_N = 0), the
	// weights of prefix j in ⟨r, ΔP⟩ and ⟨r∘r, ΔP⟩.
	u, w []fss.Fp
}

// NewServer returns server id (0 or 1) with the shared key.
func (s *Scheme) NewServer(id int, key [KeySize]byte) (*Server, error) {
	if id != 0 && id != 1 {
		return nil, fmt.Errorf("vdcf: server id %d: want 0 (leader) or 1 (helper)", id)
	}
	r := challengeVector(key, s.bins)
	v := &Server{s: s, id: id, key: key, u: make([]fss.Fp, s.bins), w: make([]fss.Fp, s.bins)}
	var rNext, sqNext fss.Fp // r_{j+1}, r_{j+1}²
	for j := s.bins - 1; j >= 0; j-- {
		sq := r[j].Mul(r[j])
		v.u[j], v.w[j] = r[j].Sub(rNext), sq.Sub(sqNext)
		rNext, sqNext = r[j], sq
	}
	return v, nil
}

// Share is one server's decoded share of a report: its key, its seed and
// its explicit shares of the determined correlated values.
type Share struct {
	key      *fss.FieldKey
	seed     [SeedSize]byte
	explicit []fss.Fp
}

// DecodeShare decodes this server's share of a report. Undecodable bytes
// match verify.ErrMalformed; a well-formed key for the other server or for
// another grid matches verify.ErrMismatch.
func (v *Server) DecodeShare(b []byte) (*Share, error) {
	m, keyLen, size := v.s.Components(), v.s.keySize(), v.s.ShareSize(v.id)
	if len(b) < keyLen {
		return nil, fmt.Errorf("vdcf: %w: share of %d bytes, want %d for server %d of %d bins", verify.ErrMalformed, len(b), size, v.id, v.s.bins)
	}
	key, err := fss.DecodeField(b[:keyLen])
	if err != nil {
		return nil, fmt.Errorf("vdcf: %w: %v", verify.ErrMalformed, err)
	}
	if key.Party() != v.id || key.Bits() != v.s.dom.Bits() || key.Components() != m {
		return nil, fmt.Errorf("vdcf: %w: key for server %d with n = %d, m = %d; this is server %d of a grid with n = %d, m = %d",
			verify.ErrMismatch, key.Party(), key.Bits(), key.Components(), v.id, v.s.dom.Bits(), m)
	}
	if len(b) != size {
		return nil, fmt.Errorf("vdcf: %w: share of %d bytes, want %d for server %d of %d bins", verify.ErrMalformed, len(b), size, v.id, v.s.bins)
	}
	sh := &Share{key: key, explicit: make([]fss.Fp, len(v.s.explicit[v.id]))}
	copy(sh.seed[:], b[keyLen:])
	if err := readElements(b[keyLen+SeedSize:], sh.explicit); err != nil {
		return nil, fmt.Errorf("vdcf: %w: explicit shares: %v", verify.ErrMalformed, err)
	}
	return sh, nil
}

// correlatedShare is this server's share of every correlated value of the
// report with the nonce: its seed's expansion, with its explicit shares in
// place of the expanded ones.
func (v *Server) correlatedShare(nonce [NonceSize]byte, sh *Share) []fss.Fp {
	c := expand(v.id, sh.seed, nonce, v.s.corrLen())
	for k, i := range v.s.explicit[v.id] {
		c[i] = sh.explicit[k]
	}
	return c
}

// Evaluate returns, per share, this server's share of the report's prefix
// vector: out[i][j·m + c] is its share of β_c·1[bin ≤ j] for every prefix
// j < bins, m = Scheme.Components (fss.PrefixDomain.FieldPrefixes, one
// tree walk per key, keys in lockstep).
func (v *Server) Evaluate(shares []*Share) ([][]fss.Fp, error) {
	keys := make([]*fss.FieldKey, len(shares))
	out := make([][]fss.Fp, len(shares))
	for i, sh := range shares {
		keys[i] = sh.key
		out[i] = make([]fss.Fp, v.s.bins*v.s.Components())
	}
	if err := v.s.dom.FieldPrefixes(keys, out); err != nil {
		return nil, fmt.Errorf("vdcf: %w", err)
	}
	return out, nil
}

// Indices of the servers' combination coefficients ρ₁ … ρ₆ (package doc).
const (
	rhoLabel = iota // ρ₁: the label is a bit at the bin
	rhoTotal        // ρ₂: the total count is 1
	rhoMAC          // ρ₃: the MAC
	rhoBits         // ρ₄: the probability's bits are bits
	rhoSupp         // ρ₅: the probability is at the bin
	rhoTop          // ρ₆: b_32 = 1 only for p = 2^32
	rhoLen
)

// coefficients are the servers' combination coefficients of one report,
// ρ₁ … ρ₆ (nonzero), and with the probability the bits' challenges s_i.
type coefficients struct {
	rho [rhoLen]fss.Fp
	s   []fss.Fp
}

// Domain-separation bytes of the two challenge streams drawn from the
// servers' key: the per-key challenge vector r and a report's
// coefficients (1 labels the expansion of a party's seed, expand).
const (
	streamReport = 0
	streamVector = 2
)

// stream is ChaCha8 seeded with SHA-256(Version ‖ label ‖ key ‖ nonce),
// nonce empty for the challenge vector.
func stream(label byte, key [KeySize]byte, nonce []byte) *rand.ChaCha8 {
	h := sha256.New()
	h.Write([]byte(Version))
	h.Write([]byte{label})
	h.Write(key[:])
	h.Write(nonce)
	var seed [32]byte
	h.Sum(seed[:0])
	return rand.NewChaCha8(seed)
}

// challengeVector derives the challenge vector r ∈ F_p^bins of every
// report from the servers' key alone: r_0, …, r_{bins−1} from
// stream(streamVector, key), 64-bit words rejection-sampled into F_p.
func challengeVector(key [KeySize]byte, bins int) []fss.Fp {
	st := stream(streamVector, key, nil)
	r := make([]fss.Fp, bins)
	for j := range r {
		r[j] = next(st)
	}
	return r
}

// challenge derives the coefficients of the report with the nonce from
// the servers' key: from stream(streamReport, key, nonce), 64-bit words
// rejection-sampled into F_p, ρ₁ … ρ₆ (each redrawn while zero), then
// s_0 … s_32 if the scheme carries the probability.
func (v *Server) challenge(nonce [NonceSize]byte) coefficients {
	st := stream(streamReport, v.key, nonce[:])
	var c coefficients
	for i := range c.rho {
		for c.rho[i] == 0 {
			c.rho[i] = next(st)
		}
	}
	if v.s.prob {
		c.s = make([]fss.Fp, probBits)
		for i := range c.s {
			c.s[i] = next(st)
		}
	}
	return c
}

// next draws a uniform field element from the stream.
func next(st *rand.ChaCha8) fss.Fp {
	for {
		if x := fss.Fp(st.Uint64()); x.Valid() {
			return x
		}
	}
}

// sketch is one server's share of the report's sketch: ⟨r, Δv⟩ for the
// components, ⟨r∘r, ΔCount⟩ and the total count.
type sketch struct {
	x     []fss.Fp
	q     fss.Fp
	total fss.Fp
}

// sketchOf computes the sketch of a prefix vector in one pass with the
// server's precomputed weights, ⟨r, ΔP⟩ = Σ_j u_j·P(j) and
// ⟨r∘r, ΔP⟩ = Σ_j w_j·P(j): m + 1 products per prefix, accumulated
// unreduced and reduced once per sum, on AVX-512 IFMA where the CPU has
// it (sketchAccel) and for the prefixes it leaves in scalar loops (the
// probability's in a second one, so that the first one's accumulators
// stay in registers).
func (v *Server) sketchOf(prefixes []fss.Fp) sketch {
	m, u, w := v.s.Components(), v.u, v.w
	// count, label, MAC, probability, square: the prefixes done below
	sums, done := sketchAccel(prefixes, u, w, m)
	var count, label, mac, sq wide
	for j := done; j < len(u); j++ {
		row := (*[3]fss.Fp)(prefixes[m*j:]) // Count, Label, MAC
		count = count.addMul(u[j], row[payload.Count])
		label = label.addMul(u[j], row[payload.Label])
		mac = mac.addMul(u[j], row[MAC])
		sq = sq.addMul(w[j], row[payload.Count])
	}
	s := sketch{
		x: []fss.Fp{sums[0].Add(count.reduce()), sums[1].Add(label.reduce()), sums[2].Add(mac.reduce())},
		q: sums[4].Add(sq.reduce()),
	}
	if v.s.prob {
		var prob wide
		for j := done; j < len(u); j++ {
			prob = prob.addMul(u[j], prefixes[m*j+Probability])
		}
		s.x = append(s.x, sums[3].Add(prob.reduce()))
	}
	s.total = prefixes[len(prefixes)-m+int(payload.Count)]
	return s
}

// wide is an unreduced sum of 128-bit products: top·2^128 + hi·2^64 + lo.
type wide struct{ lo, hi, top uint64 }

// addMul returns a + x·y. (Values, not pointers: the sketch's
// accumulators then stay in registers.)
func (a wide) addMul(x, y fss.Fp) wide {
	ph, pl := bits.Mul64(uint64(x), uint64(y))
	var c uint64
	a.lo, c = bits.Add64(a.lo, pl, 0)
	a.hi, c = bits.Add64(a.hi, ph, c)
	a.top += c
	return a
}

// twoTo128 is 2^128 mod p = −2^32.
const twoTo128 = fss.Fp(fss.Modulus - 1<<32)

func (a wide) reduce() fss.Fp {
	return fss.Fp(0).Add(fss.Fp(a.lo % fss.Modulus)).Add(fss.Fp(a.hi % fss.Modulus).Mul(fss.Fp(1<<32 - 1))).Add(fss.Fp(a.top % fss.Modulus).Mul(twoTo128))
}

// Pending is a server's state for one report between its messages.
type Pending struct {
	v     *Server
	coef  coefficients
	sk    sketch
	corr  []fss.Fp
	open  []fss.Fp // own share of the openings (d₁, d₂[, d_p, d_0 … d_32])
	z     fss.Fp   // own share of the check value, once exchanged
	stage int
}

// Prepare starts the verification of one report from this server's share
// and its evaluated prefix vector (Evaluate): it derives the report's
// coefficients from the key and the nonce, sketches the vector with the
// server's challenge vector (drawn from the key alone) and returns
// the first message, the masked openings d₁ = ⟨r, ΔCount⟩ − a₁ and
// d₂ = ⟨r, ΔLabel⟩ − a₂, and with the probability d_p = p̂ − a_p and
// d_i = s_i·b_i − a'_i (Message1Size bytes).
func (v *Server) Prepare(nonce [NonceSize]byte, sh *Share, prefixes []fss.Fp) (*Pending, []byte, error) {
	m := v.s.Components()
	if len(prefixes) != v.s.bins*m {
		return nil, nil, fmt.Errorf("vdcf: prefix vector of %d elements, want %d bins × %d components", len(prefixes), v.s.bins, m)
	}
	p := &Pending{v: v, coef: v.challenge(nonce), corr: v.correlatedShare(nonce, sh), stage: 1}
	p.sk = v.sketchOf(prefixes)
	c := p.corr
	p.open = append(make([]fss.Fp, 0, v.s.openings()),
		p.sk.x[payload.Count].Sub(c[corrA1]),
		p.sk.x[payload.Label].Sub(c[corrA2]))
	if v.s.prob {
		p.open = append(p.open, p.estimate().Sub(c[corrAP]))
		for i, s := range p.coef.s {
			p.open = append(p.open, s.Mul(c[corrBits+i]).Sub(c[corrMasks+i]))
		}
	}
	return p, appendElements(nil, p.open), nil
}

// estimate is this server's share of p̂ = Σ 2^i·b_i.
func (p *Pending) estimate() fss.Fp {
	var e fss.Fp
	for i := probBits - 1; i >= 0; i-- {
		e = e.Add(e).Add(p.corr[corrBits+i])
	}
	return e
}

// Exchange takes the other server's first message and returns this
// server's second: its share of the check value z (Message2Size bytes).
func (p *Pending) Exchange(peer []byte) ([]byte, error) {
	if p.stage != 1 {
		return nil, fmt.Errorf("vdcf: Exchange called at stage %d, want 1 (after Prepare)", p.stage)
	}
	other := make([]fss.Fp, len(p.open))
	if err := readElements(peer, other); err != nil {
		return nil, fmt.Errorf("vdcf: %w: first message: %v", verify.ErrMalformed, err)
	}
	p.stage = 2
	for i := range other {
		other[i] = other[i].Add(p.open[i])
	}
	p.z = p.checkShare(other)
	return appendElements(nil, []fss.Fp{p.z}), nil
}

// lead is 1 at the leader and 0 at the helper: the public terms of a
// share go to the leader's.
func (p *Pending) lead() fss.Fp {
	if p.v.id == 0 {
		return 1
	}
	return 0
}

// checkShare returns this server's share of
//
//	z = (x₁² − ⟨r∘r, ΔCount⟩) + ρ₁·x₂(x₁ − x₂) + ρ₂·(Σ ΔCount − 1)
//	  [+ the probability's terms] + ρ₃·(the MAC term, macShare)
//
// with x₁ = ⟨r, ΔCount⟩, x₂ = ⟨r, ΔLabel⟩, from the opened d =
// (d₁, d₂[, d_p, d_0 … d_32]) (Beaver's multiplication; package doc,
// "Protocol" and "Probability").
func (p *Pending) checkShare(d []fss.Fp) fss.Fp {
	c, sk, rho := p.corr, &p.sk, &p.coef.rho
	lead := p.lead()
	d1, d2 := d[0], d[1]
	e := d1.Sub(d2) // opening of x₁ − x₂, masked by a₁ − a₂
	two := fss.Fp(2)
	square := lead.Mul(d1.Mul(d1)).Add(two.Mul(d1).Mul(c[corrA1])).Add(c[corrC1])
	product := lead.Mul(d2.Mul(e)).Add(d2.Mul(c[corrA1].Sub(c[corrA2]))).Add(e.Mul(c[corrA2])).Add(c[corrC2])
	total := sk.total.Sub(lead)
	z := square.Sub(sk.q).Add(rho[rhoLabel].Mul(product)).Add(rho[rhoTotal].Mul(total))
	if p.v.s.prob {
		z = z.Add(p.probabilityShare(d))
	}
	return z.Add(rho[rhoMAC].Mul(p.macShare(d)))
}

// macShare is this server's share of the MAC term
//
//	κ₁x₁ + κ₂x₂ − ⟨r, ΔMAC⟩ [+ Σ_i (κ'_i·x'_i − s_i·(κ'_i b_i)) + κ_p·p̂ − κ_p·p],
//
// each κ·x from its opening: κ·d + κ·a, the κ·a summed in μ.
func (p *Pending) macShare(d []fss.Fp) fss.Fp {
	c := p.corr
	mac := c[corrK1].Mul(d[0]).Add(c[corrK2].Mul(d[1])).Add(c[corrMu]).Sub(p.sk.x[MAC])
	if !p.v.s.prob {
		return mac
	}
	for i, di := range d[3:] {
		mac = mac.Add(c[corrKeys+i].Mul(di)).Sub(p.coef.s[i].Mul(c[corrMacs+i]))
	}
	return mac.Add(c[corrKP].Mul(d[2])).Sub(c[corrMP])
}

// probabilityShare returns this server's share of the probability's
// terms of z,
//
//	ρ₄·(Σ_i x'_i² − Σ_i s_i²·b_i) + ρ₅·(⟨r, ΔProbability⟩ − p̂·x₁)
//	  + ρ₆·(x'_32·p̂ − 2^32·x'_32),    x'_i = s_i·b_i, p̂ = Σ_i 2^i·b_i,
//
// from the opened d_p = p̂ − a_p and d_i = x'_i − a'_i.
func (p *Pending) probabilityShare(d []fss.Fp) fss.Fp {
	c, sk, rho, s := p.corr, &p.sk, &p.coef.rho, p.coef.s
	lead, two := p.lead(), fss.Fp(2)
	d1, dp, bits := d[0], d[2], d[3:]
	var sq wide // Σ_i (lead·d_i² + 2d_i·a'_i) − s_i²·b_i, accumulated
	for i, di := range bits {
		sq = sq.addMul(di, lead.Mul(di).Add(two.Mul(c[corrMasks+i])))
		sq = sq.addMul(s[i].Mul(s[i]).Neg(), c[corrBits+i])
	}
	bitTerm := sq.reduce().Add(c[corrSq])
	pxShare := lead.Mul(dp.Mul(d1)).Add(dp.Mul(c[corrA1])).Add(d1.Mul(c[corrAP])).Add(c[corrCP])
	supp := sk.x[Probability].Sub(pxShare)
	top := probBits - 1
	dt, xt := bits[top], s[top].Mul(c[corrBits+top])
	topTerm := lead.Mul(dt.Mul(dp)).Add(dt.Mul(c[corrAP])).Add(dp.Mul(c[corrMasks+top])).Add(c[corrCT]).Sub(fss.Fp(MaxProbability).Mul(xt))
	return rho[rhoBits].Mul(bitTerm).Add(rho[rhoSupp].Mul(supp)).Add(rho[rhoTop].Mul(topTerm))
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
