package noise

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/chacha20"
)

// Source is a stream of uniformly random 64-bit words. The samplers of this
// package read only from a Source, so the randomness used for noise is
// always a cryptographic stream: a Stream derived from a secret Seed.
type Source interface {
	Uint64() uint64
}

// Seed is the 256-bit secret of one release. Node noises are derived from
// it deterministically (Stream), so a server keeps only the seed to
// answer any later query of the release with the same noise.
type Seed [32]byte

// NewSeed draws a fresh seed from crypto/rand.
func NewSeed() (Seed, error) {
	var s Seed
	if _, err := rand.Read(s[:]); err != nil {
		return s, fmt.Errorf("noise: drawing a release seed from crypto/rand: %w", err)
	}
	return s, nil
}

// Stream returns the keystream of ChaCha20 keyed by the seed, with the
// nonce made of (domain, index). Distinct (domain, index) pairs give
// independent, pseudorandom streams: ChaCha20 is a PRF in its nonce.
// Use domain to separate different uses of one seed and index for the
// noise variable (node) being drawn.
func (s Seed) Stream(domain uint32, index uint64) *Stream {
	var nonce [chacha20.NonceSize]byte
	binary.LittleEndian.PutUint32(nonce[0:4], domain)
	binary.LittleEndian.PutUint64(nonce[4:12], index)
	c, err := chacha20.NewUnauthenticatedCipher(s[:], nonce[:])
	if err != nil {
		panic(err) // unreachable: key and nonce sizes are fixed
	}
	return &Stream{c: c}
}

// Stream is a deterministic cryptographic Source derived from a Seed.
type Stream struct {
	c   *chacha20.Cipher
	buf [64]byte
	pos int
	ok  bool
}

// Uint64 returns the next 64 bits of the keystream.
func (st *Stream) Uint64() uint64 {
	if !st.ok || st.pos == len(st.buf) {
		clear(st.buf[:])
		st.c.XORKeyStream(st.buf[:], st.buf[:])
		st.pos, st.ok = 0, true
	}
	v := binary.LittleEndian.Uint64(st.buf[st.pos:])
	st.pos += 8
	return v
}

// Fill sets words to the next len(words) words of the keystream, the
// same words as that many calls of Uint64, computing whole 64-byte
// blocks at once: a release's fixed budget of words per node costs the
// same whatever its sampler reads of it (package mechanism, "Fixed work
// at release creation").
func (st *Stream) Fill(words []uint64) {
	i := 0
	for ; i < len(words) && st.ok && st.pos < len(st.buf); i++ {
		words[i] = st.Uint64()
	}
	var bulk [512]byte // eight ChaCha20 blocks at a time
	for len(words)-i >= 8 {
		n := min(len(bulk), 8*((len(words)-i)/8*8))
		clear(bulk[:n])
		st.c.XORKeyStream(bulk[:n], bulk[:n])
		for b := 0; b < n; b += 8 {
			words[i] = binary.LittleEndian.Uint64(bulk[b:])
			i++
		}
	}
	for ; i < len(words); i++ {
		words[i] = st.Uint64()
	}
}
