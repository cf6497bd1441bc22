package vdcf

// Preparation split over processes: one process of a server evaluates a
// report's key and sketches it (PrepareAll), keeps the sketch
// (Pending.Sketch), and another starts the same verification from it
// (Resketch) without the prefix vector, deriving again only what is
// cheap: the challenges (both checks' ρ, s, β and the row factors α,
// drawn from one stream), the correlated randomness and the openings.

import (
	"fmt"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// SketchSize is the size of an encoded sketch (Pending.Sketch): per
// check, the sketch's inner products, ⟨r∘r, ΔCount⟩ and the total
// count, 8 bytes each.
func (s *Scheme) SketchSize() int { return checks * (s.sketchLen() + 2) * 8 }

// sketchLen is the number of inner products ⟨r, ΔP⟩ in a check's
// sketch: count, label and the MAC (and the probability).
func (s *Scheme) sketchLen() int {
	if s.prob {
		return 4
	}
	return 3
}

// Sketch returns this server's sketch of the report (SketchSize bytes,
// canonical field elements, little-endian), from which Resketch starts
// the same verification again. It holds this server's shares of inner
// products of its own prefix vector, which its share of the report
// determines with the servers' key: nothing of the other server's
// messages.
func (p *Pending) Sketch() []byte {
	out := make([]byte, 0, p.v.s.SketchSize())
	for _, ch := range p.chk {
		out = appendElements(out, ch.sk.x)
		out = appendElements(out, []fss.Fp{ch.sk.q, ch.sk.total})
	}
	return out
}

// Resketch is PrepareAll from the report's sketch (Pending.Sketch of the
// report's PrepareAll at this server, possibly in another process) instead
// of its prefix vector: the same pending verification and first message.
// A sketch of another length, or with an element not below the modulus,
// is ErrMalformed; one of another report makes the report fail its
// verification (its check values are then those of another vector).
func (v *Server) Resketch(nonce [NonceSize]byte, sh *Share, sk []byte) (*Pending, []byte, error) {
	n := v.s.sketchLen() + 2
	els := make([]fss.Fp, checks*n)
	if err := readElements(sk, els); err != nil {
		return nil, nil, fmt.Errorf("vdcf: %w: sketch: %v", verify.ErrMalformed, err)
	}
	var sks [checks]sketch
	for k := range sks {
		e := els[k*n : (k+1)*n]
		sks[k] = sketch{x: e[: n-2 : n-2], q: e[n-2], total: e[n-1]}
	}
	sc := v.bufs.Get().(*scratch)
	defer v.bufs.Put(sc)
	p, msg := v.start(nonce, sh, v.challenges(nonce, sc), sks)
	return p, msg, nil
}
