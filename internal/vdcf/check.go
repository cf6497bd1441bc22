package vdcf

// Server checks: each server decodes its share of a report (DecodeShare),
// walks its key, sketching the prefix vector as it goes (PrepareAll,
// prepare.go), and exchanges one message with the other server
// (Exchange, Finish) to accept or reject the report.

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// Server is one server's side of the verification: its index (0 leader,
// 1 helper) and the verification key it shares with the other server and
// keeps secret from parties, from which it derives each report's
// challenges once the report is fixed (package doc, "Soundness").
type Server struct {
	s   *Scheme
	id  int
	key [KeySize]byte
	// bufs holds Resketch's scratch memory (*scratch), walks that of
	// PrepareAll and EvaluateSummed (*walked).
	bufs, walks sync.Pool
}

// NewServer returns server id (0 or 1) with the shared key.
func (s *Scheme) NewServer(id int, key [KeySize]byte) (*Server, error) {
	if id != 0 && id != 1 {
		return nil, fmt.Errorf("vdcf: server id %d: want 0 (leader) or 1 (helper)", id)
	}
	v := &Server{s: s, id: id, key: key}
	v.bufs.New = func() any { return v.newScratch() }
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

// sketch is one server's share of the report's sketch: ⟨r, Δv⟩ for the
// components, ⟨r∘r, ΔCount⟩ and the total count.
type sketch struct {
	x     []fss.Fp
	q     fss.Fp
	total fss.Fp
}

// The sketch's sums, each kept per column of the challenge tensor:
// Σ_h α_h·ΔP_c(h, l) for the count, label, MAC and probability
// components, and Σ_h α_h²·ΔCount(h, l).
const (
	sumCount = iota
	sumLabel
	sumMAC
	sumSquare
	sumProb
	sumLen
)

// columns holds, per sum and column l of the challenge tensor, the sum
// over the rows, unreduced.
type columns [sumLen][tensorCols]wide

// dot returns Σ_l f_l·(sum d of column l) mod p for the column factors
// f (β, or β² for the square): the three words of the columns' sums
// weighted apart, then reduced once each.
func (cols *columns) dot(d int, f *[tensorCols]fss.Fp) fss.Fp {
	var lo, hi, top wide
	for l, w := range cols[d] {
		lo = lo.addMul(f[l], fss.Fp(w.lo))
		hi = hi.addMul(f[l], fss.Fp(w.hi))
		top = top.addMul(f[l], fss.Fp(w.top))
	}
	return lo.reduce().Add(hi.reduce().Mul(twoTo64)).Add(top.reduce().Mul(twoTo128))
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

// twoTo64 and twoTo128 are 2^64 mod p = 2^32 − 1 and 2^128 mod p = −2^32.
const (
	twoTo64  = fss.Fp(1<<32 - 1)
	twoTo128 = fss.Fp(fss.Modulus - 1<<32)
)

// add returns a + b, exactly (while the sum is below 2^192).
func (a wide) add(b wide) wide {
	var c uint64
	a.lo, c = bits.Add64(a.lo, b.lo, 0)
	a.hi, c = bits.Add64(a.hi, b.hi, c)
	a.top += b.top + c
	return a
}

// addLimbs returns a + z0 + 2^52·z1 + 2^104·z2, exactly: the three
// lane sums of one column of the IFMA sketch.
func (a wide) addLimbs(z0, z1, z2 uint64) wide {
	return a.add(wide{lo: z0}).add(wide{lo: z1 << 52, hi: z1 >> 12}).add(wide{hi: z2 << 40, top: z2 >> 24})
}

func (a wide) reduce() fss.Fp {
	return fss.Fp(0).Add(fss.Fp(a.lo % fss.Modulus)).Add(fss.Fp(a.hi % fss.Modulus).Mul(fss.Fp(1<<32 - 1))).Add(fss.Fp(a.top % fss.Modulus).Mul(twoTo128))
}

// Pending is a server's state for one report between its messages.
type Pending struct {
	v     *Server
	chk   [checks]check
	corr  []fss.Fp
	stage int
}

// check is one of a report's independent checks at one server.
type check struct {
	coef coefficients
	sk   sketch
	corr []fss.Fp // its block of the correlated randomness
	open []fss.Fp // own share of the openings (d₁, d₂[, d_p, d_0 … d_32])
	z    fss.Fp   // own share of the check value, once exchanged
}

// start begins the verification of one report from its checks'
// challenges and this server's sketches of its prefix vector (PrepareAll,
// Resketch): for each check it opens, masked, d₁ = ⟨r, ΔCount⟩ − a₁ and
// d₂ = ⟨r, ΔLabel⟩ − a₂, and with the probability d_p = p̂ − a_p and
// d_i = s_i·b_i − a'_i. It returns the pending verification and the
// first message, both checks' openings (Message1Size bytes).
func (v *Server) start(nonce [NonceSize]byte, sh *Share, coef [checks]coefficients, sks [checks]sketch) (*Pending, []byte) {
	p := &Pending{v: v, corr: v.correlatedShare(nonce, sh), stage: 1}
	msg := make([]byte, 0, v.s.Message1Size())
	for k := range p.chk {
		ch := &p.chk[k]
		ch.coef, ch.sk = coef[k], sks[k]
		ch.coef.alpha, ch.coef.alpha2 = nil, nil // sketched: their buffer goes back to the pool
		c := p.corr[k*v.s.blockLen() : (k+1)*v.s.blockLen()]
		ch.corr = c
		ch.open = append(make([]fss.Fp, 0, v.s.openings()),
			ch.sk.x[payload.Count].Sub(c[corrA1]),
			ch.sk.x[payload.Label].Sub(c[corrA2]))
		if v.s.prob {
			ch.open = append(ch.open, ch.estimate().Sub(c[corrAP]))
			for i, s := range ch.coef.s {
				ch.open = append(ch.open, s.Mul(c[corrBits+i]).Sub(c[corrMasks+i]))
			}
		}
		msg = appendElements(msg, ch.open)
	}
	return p, msg
}

// estimate is this server's share of p̂ = Σ 2^i·b_i.
func (ch *check) estimate() fss.Fp {
	var e fss.Fp
	for i := probBits - 1; i >= 0; i-- {
		e = e.Add(e).Add(ch.corr[corrBits+i])
	}
	return e
}

// Exchange takes the other server's first message and returns this
// server's second: its shares of the checks' values z (Message2Size
// bytes).
func (p *Pending) Exchange(peer []byte) ([]byte, error) {
	if p.stage != 1 {
		return nil, fmt.Errorf("vdcf: Exchange called at stage %d, want 1 (after PrepareAll or Resketch)", p.stage)
	}
	n := p.v.s.openings()
	other := make([]fss.Fp, checks*n)
	if err := readElements(peer, other); err != nil {
		return nil, fmt.Errorf("vdcf: %w: first message: %v", verify.ErrMalformed, err)
	}
	p.stage = 2
	out := make([]byte, 0, Message2Size)
	for k := range p.chk {
		ch := &p.chk[k]
		d := other[k*n : (k+1)*n]
		for i := range d {
			d[i] = d[i].Add(ch.open[i])
		}
		ch.z = p.checkShare(ch, d)
		out = appendElements(out, []fss.Fp{ch.z})
	}
	return out, nil
}

// Resume restores a Pending after Exchange from this server's own second
// message, returned by Exchange on the same report before (a restarted
// helper keeps that instead of the other server's first message: package
// server, "Verification state across restarts"). The report must be
// prepared again (PrepareAll or Resketch), the same way, first.
func (p *Pending) Resume(second []byte) error {
	if p.stage != 1 {
		return fmt.Errorf("vdcf: Resume called at stage %d, want 1 (after PrepareAll or Resketch)", p.stage)
	}
	var z [checks]fss.Fp
	if err := readElements(second, z[:]); err != nil {
		return fmt.Errorf("vdcf: %w: own second message: %v", verify.ErrMalformed, err)
	}
	for k := range p.chk {
		p.chk[k].z = z[k]
	}
	p.stage = 2
	return nil
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
func (p *Pending) checkShare(ch *check, d []fss.Fp) fss.Fp {
	c, sk, rho := ch.corr, &ch.sk, &ch.coef.rho
	lead := p.lead()
	d1, d2 := d[0], d[1]
	e := d1.Sub(d2) // opening of x₁ − x₂, masked by a₁ − a₂
	two := fss.Fp(2)
	square := lead.Mul(d1.Mul(d1)).Add(two.Mul(d1).Mul(c[corrA1])).Add(c[corrC1])
	product := lead.Mul(d2.Mul(e)).Add(d2.Mul(c[corrA1].Sub(c[corrA2]))).Add(e.Mul(c[corrA2])).Add(c[corrC2])
	total := sk.total.Sub(lead)
	z := square.Sub(sk.q).Add(rho[rhoLabel].Mul(product)).Add(rho[rhoTotal].Mul(total))
	if p.v.s.prob {
		z = z.Add(p.probabilityShare(ch, d))
	}
	return z.Add(rho[rhoMAC].Mul(p.macShare(ch, d)))
}

// macShare is this server's share of the MAC term
//
//	κ₁x₁ + κ₂x₂ − ⟨r, ΔMAC⟩ [+ Σ_i (κ'_i·x'_i − s_i·(κ'_i b_i)) + κ_p·p̂ − κ_p·p],
//
// each κ·x from its opening: κ·d + κ·a, the κ·a summed in μ.
func (p *Pending) macShare(ch *check, d []fss.Fp) fss.Fp {
	c := ch.corr
	mac := c[corrK1].Mul(d[0]).Add(c[corrK2].Mul(d[1])).Add(c[corrMu]).Sub(ch.sk.x[MAC])
	if !p.v.s.prob {
		return mac
	}
	for i, di := range d[3:] {
		mac = mac.Add(c[corrKeys+i].Mul(di)).Sub(ch.coef.s[i].Mul(c[corrMacs+i]))
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
func (p *Pending) probabilityShare(ch *check, d []fss.Fp) fss.Fp {
	c, sk, rho, s := ch.corr, &ch.sk, &ch.coef.rho, ch.coef.s
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

// Finish takes the other server's second message and decides: nil when,
// for each check, the two shares of its z add up to 0 (the report is
// valid), an error matching verify.ErrProof otherwise. Both servers decide
// from the same values, so they accept or reject together.
func (p *Pending) Finish(peer []byte) error {
	if p.stage != 2 {
		return fmt.Errorf("vdcf: Finish called at stage %d, want 2 (after Exchange)", p.stage)
	}
	p.stage = 3
	var other [checks]fss.Fp
	if err := readElements(peer, other[:]); err != nil {
		return fmt.Errorf("vdcf: %w: second message: %v", verify.ErrMalformed, err)
	}
	for k, ch := range p.chk {
		if ch.z.Add(other[k]) != 0 {
			return fmt.Errorf("vdcf: %w: the report does not encode one record (check %d of %d)", verify.ErrProof, k+1, checks)
		}
	}
	return nil
}

// VerifyPair runs both servers' verification of r in process (PrepareAll
// of the one report, Exchange, Finish), exchanging the messages
// directly. It returns both servers' summed components of the report's
// prefix vector (Prepared.Summed: component Scheme.Summed()[k]'s prefix
// j at k·N + j) if both accept, else the first error; a rejection is the
// same at both servers.
func VerifyPair(leader, helper *Server, r Report) ([2][]fss.Fp, error) {
	var summed [2][]fss.Fp
	srv := [2]*Server{leader, helper}
	var pend [2]*Pending
	var msg [2][]byte
	for i, v := range srv {
		sh, err := v.DecodeShare(r.Shares[i])
		if err != nil {
			return [2][]fss.Fp{}, err
		}
		prepared, err := v.PrepareAll([][NonceSize]byte{r.Nonce}, []*Share{sh})
		if err != nil {
			return [2][]fss.Fp{}, err
		}
		pend[i], msg[i], summed[i] = prepared[0].Pending, prepared[0].Message, prepared[0].Summed
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
	return summed, nil
}
