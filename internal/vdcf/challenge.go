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

// tensorCols is b, the number of columns of a challenge vector laid out
// as a tensor: prefix j is at row h = ⌊j/b⌋ and column l = j mod b, and
// r_j = α_h·β_l (package doc, "Tensor challenges"). Eight columns are
// the eight lanes of the AVX-512 sketch, so that a row of prefixes is a
// vector and the column sums stay in lanes.
const tensorCols = 8

// tensorRows is a, the number of rows of the challenge tensor of N bins:
// ⌈N/b⌉.
func tensorRows(bins int) int { return (bins + tensorCols - 1) / tensorCols }

// coefficients are one check's challenge of one report: the combination
// coefficients ρ₁ … ρ₆ (nonzero), with the probability the bits'
// challenges s_i, and the challenge vector r as its tensor factors, the
// rows' α_h with their squares and the columns' β_l with theirs:
// r_j = α_h·β_l and r_j² = α_h²·β_l² (dropped once sketched).
type coefficients struct {
	rho           [rhoLen]fss.Fp
	s             []fss.Fp
	alpha, alpha2 []fss.Fp
	beta, beta2   [tensorCols]fss.Fp
}

// r returns the challenge vector's element j, α_h·β_l.
func (c *coefficients) r(j int) fss.Fp {
	return c.alpha[j/tensorCols].Mul(c.beta[j%tensorCols])
}

// streamReport is the domain-separation byte of the challenge streams
// drawn from the servers' key (1 labels the expansion of a party's seed,
// expand; 2 labelled the per-key challenge vector of Version v4).
const streamReport = 0

// reportCipher is the block cipher of the challenge stream of the
// report with the nonce: AES-128 under the first 16 bytes of
// SHA-256(Version ‖ label ‖ key ‖ nonce). The stream is its CTR
// keystream from the zero counter block, read as little-endian 64-bit
// words, the first check's challenge first (BenchmarkChallenge).
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

// zeroBlock is the first counter block of a challenge stream.
var zeroBlock [aes.BlockSize]byte

// ctrStream reads a CTR keystream in blocks of ctrBuffer bytes.
type ctrStream struct {
	ctr cipher.Stream
	buf [ctrBuffer]byte
	pos int
}

// start starts the stream over as the CTR keystream of c from the zero
// counter block.
func (c *ctrStream) start(b cipher.Block) {
	c.ctr, c.pos = cipher.NewCTR(b, zeroBlock[:]), 0
}

// ctrBuffer is the number of keystream bytes generated at once.
const ctrBuffer = 512

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

// scratch is a Prepare's working memory, reused through a pool: the
// challenge tensors' row factors (2·tensorRows(N) elements per check)
// and the challenge stream.
type scratch struct {
	rows []fss.Fp
	st   ctrStream
}

// newScratch returns working memory for one Prepare.
func (v *Server) newScratch() *scratch {
	return &scratch{rows: make([]fss.Fp, 2*checks*tensorRows(v.s.bins))}
}

// challenges derives the report's challenges from the servers' key and
// its nonce, after the report is fixed: the checks' challenges one after
// the other from one stream (challenge), the row factors of check k in
// sc.rows[2ka : 2(k+1)a], a = tensorRows(N).
func (v *Server) challenges(nonce [NonceSize]byte, sc *scratch) [checks]coefficients {
	return v.challengesIn(nonce, &sc.st, sc.rows)
}

// challengesIn is challenges with the stream st and the row factors in
// rows (2·checks·tensorRows(N) elements).
func (v *Server) challengesIn(nonce [NonceSize]byte, st *ctrStream, rows []fss.Fp) [checks]coefficients {
	st.start(reportCipher(streamReport, v.key, nonce[:]))
	var out [checks]coefficients
	a := tensorRows(v.s.bins)
	for k := range out {
		out[k] = v.challenge(st, rows[2*k*a:2*(k+1)*a])
	}
	return out
}

// challenge draws one check's challenge from its stream, 64-bit words
// rejection-sampled into F_p: ρ₁ … ρ₆ (each redrawn while zero), then
// s_0 … s_32 if the scheme carries the probability, then the column
// factors β_0 … β_{b−1}, then the row factors α_0 … α_{a−1}, in buf (2a
// elements) with their squares.
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
	st.elements(c.beta[:])
	for l, b := range c.beta {
		c.beta2[l] = b.Mul(b)
	}
	a := len(buf) / 2
	c.alpha, c.alpha2 = buf[:a:a], buf[a:]
	st.elements(c.alpha)
	squares(c.alpha2, c.alpha)
	return c
}

// squares sets dst[i] = src[i]², eight at a time on AVX-512.
func squares(dst, src []fss.Fp) {
	dst = dst[:len(src)]
	for i := squareAccel(dst, src); i < len(src); i++ {
		dst[i] = src[i].Mul(src[i])
	}
}

// next draws a uniform field element from the stream.
func next(st interface{ Uint64() uint64 }) fss.Fp {
	for {
		if x := fss.Fp(st.Uint64()); x.Valid() {
			return x
		}
	}
}
