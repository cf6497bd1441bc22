package vdcf

// Challenge derivation: the pseudorandom streams both sides draw — a
// party's seed expanded (expand), and the servers' challenge vector and
// per-report coefficients derived from their shared key.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/fss"
)

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

// coefficients are one check's challenge of one report: the combination
// coefficients ρ₁ … ρ₆ (nonzero), with the probability the bits'
// challenges s_i, and the challenge vector r as the sketch's weights
// u_j = r_j − r_{j+1} and w_j = r_j² − r_{j+1}² (r_N = 0), the weights
// of prefix j in ⟨r, ΔP⟩ and ⟨r∘r, ΔP⟩ (dropped once sketched).
type coefficients struct {
	rho  [rhoLen]fss.Fp
	s    []fss.Fp
	u, w []fss.Fp
}

// streamReport is the domain-separation byte of the challenge streams
// drawn from the servers' key (1 labels the expansion of a party's seed,
// expand; 2 labelled the per-key challenge vector of Version v4).
const streamReport = 0

// reportCipher is the block cipher of the challenge streams of the
// report with the nonce: AES-128 under the first 16 bytes of
// SHA-256(Version ‖ label ‖ key ‖ nonce). Check k's stream is its CTR
// keystream from the counter block k ‖ 0^15 (the two checks' streams are
// 2^120 blocks apart), read as little-endian 64-bit words. AES with the
// CPU's instructions produces the N words of a challenge vector at about
// twice ChaCha8's speed (BenchmarkChallenge).
func reportCipher(label byte, key [KeySize]byte, nonce []byte) cipher.Block {
	h := sha256.New()
	h.Write([]byte(Version))
	h.Write([]byte{label})
	h.Write(key[:])
	h.Write(nonce)
	var seed [32]byte
	h.Sum(seed[:0])
	c, err := aes.NewCipher(seed[:16])
	if err != nil {
		panic(err) // unreachable: the key is 16 bytes
	}
	return c
}

// newCTRStream is the keystream of check k under the block cipher c.
func newCTRStream(c cipher.Block, k byte) *ctrStream {
	iv := make([]byte, aes.BlockSize)
	iv[0] = k
	return &ctrStream{ctr: cipher.NewCTR(c, iv)}
}

// ctrStream reads a CTR keystream in blocks of ctrBuffer bytes.
type ctrStream struct {
	ctr cipher.Stream
	buf [ctrBuffer]byte
	pos int
}

// ctrBuffer is the number of keystream bytes generated at once.
const ctrBuffer = 2048

// Uint64 returns the next 64-bit word of the keystream.
func (c *ctrStream) Uint64() uint64 {
	if c.pos == 0 || c.pos == len(c.buf) {
		c.refill()
	}
	w := binary.LittleEndian.Uint64(c.buf[c.pos:])
	c.pos += 8
	return w
}

func (c *ctrStream) refill() {
	clear(c.buf[:])
	c.ctr.XORKeyStream(c.buf[:], c.buf[:])
	c.pos = 0
}

// elements fills dst with the next words of the stream below p
// (rejection sampling, as next), a buffer at a time.
func (c *ctrStream) elements(dst []fss.Fp) {
	for i := 0; i < len(dst); {
		if c.pos == 0 || c.pos == len(c.buf) {
			c.refill()
		}
		for ; c.pos < len(c.buf) && i < len(dst); c.pos += 8 {
			if x := fss.Fp(binary.LittleEndian.Uint64(c.buf[c.pos:])); x.Valid() {
				dst[i] = x
				i++
			}
		}
	}
}

// challenges derives the report's challenges from the servers' key and
// its nonce, after the report is fixed (challenge), the weights of check
// k in buf[2kN : 2(k+1)N].
func (v *Server) challenges(nonce [NonceSize]byte, buf []fss.Fp) [checks]coefficients {
	c := reportCipher(streamReport, v.key, nonce[:])
	var out [checks]coefficients
	n := v.s.bins
	for k := range out {
		var b []fss.Fp
		if buf != nil {
			b = buf[2*k*n : 2*(k+1)*n]
		}
		out[k] = v.challenge(newCTRStream(c, byte(k)), b)
	}
	return out
}

// challenge draws one check's challenge from its stream, 64-bit words
// rejection-sampled into F_p: ρ₁ … ρ₆ (each redrawn while zero), then
// s_0 … s_32 if the scheme carries the probability, then r_0 … r_{N−1},
// returned as the weights u, w in buf (2N elements; nil buf: not drawn).
func (v *Server) challenge(st *ctrStream, buf []fss.Fp) coefficients {
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
	if buf == nil { // the coefficients only (Resketch)
		return c
	}
	n := v.s.bins
	c.u, c.w = buf[:n:n], buf[n:2*n]
	st.elements(c.u)
	var rNext, sqNext fss.Fp // r_{j+1}, r_{j+1}²
	for j := n - 1; j >= 0; j-- {
		r := c.u[j]
		sq := r.Mul(r)
		c.u[j], c.w[j] = r.Sub(rNext), sq.Sub(sqNext)
		rNext, sqNext = r, sq
	}
	return c
}

// next draws a uniform field element from the stream.
func next(st interface{ Uint64() uint64 }) fss.Fp {
	for {
		if x := fss.Fp(st.Uint64()); x.Valid() {
			return x
		}
	}
}
