package vdcf

// Party encoding: a party turns its bin, label and probability into a
// report (Encode): a field DCF key per server, a seed per server and the
// correlated values that let the servers check the report.

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

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

// correlated sets the determined correlated values of d from its free
// values and pl (package doc, "Protocol" and "Probability").
func (s *Scheme) correlated(d *draft, pl plain) {
	for k := range checks {
		s.correlatedBlock(d.corr[k*s.blockLen():(k+1)*s.blockLen()], pl)
	}
}

// correlatedBlock sets the determined values of one check's block.
func (s *Scheme) correlatedBlock(corr []fss.Fp, pl plain) {
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
	full := make([]fss.Fp, s.Components())
	full[payload.Count], full[payload.Label] = pl.beta[payload.Count], pl.beta[payload.Label]
	if s.prob {
		full[Probability] = pl.beta[2]
	}
	for k := range checks {
		c := d.corr[k*s.blockLen():]
		full[s.macOf(k)] = c[corrK1].Mul(pl.beta[payload.Count]).Add(c[corrK2].Mul(pl.beta[payload.Label]))
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
