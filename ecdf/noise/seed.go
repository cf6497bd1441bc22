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
	st := &Stream{key: s}
	binary.LittleEndian.PutUint32(st.nonce[0:4], domain)
	binary.LittleEndian.PutUint64(st.nonce[4:12], index)
	st.c = st.cipherAt(0)
	return st
}

// Stream is a deterministic cryptographic Source derived from a Seed.
type Stream struct {
	key    Seed
	nonce  [chacha20.NonceSize]byte
	c      *chacha20.Cipher
	next   uint64 // the block c computes next
	buf    [64]byte
	pos    int
	ok     bool
	blocks uint64 // keystream blocks computed (Blocks)
}

// cipherAt returns the ChaCha20 cipher of the stream positioned at
// block: its next XORKeyStream computes that block first.
func (st *Stream) cipherAt(block uint64) *chacha20.Cipher {
	c, err := chacha20.NewUnauthenticatedCipher(st.key[:], st.nonce[:])
	if err != nil {
		panic(err) // unreachable: key and nonce sizes are fixed
	}
	c.SetCounter(uint32(block)) // a stream never reaches 2^32 blocks (256 GiB)
	st.next = block
	return c
}

// Uint64 returns the next 64 bits of the keystream.
func (st *Stream) Uint64() uint64 {
	if !st.ok || st.pos == len(st.buf) {
		clear(st.buf[:])
		st.c.XORKeyStream(st.buf[:], st.buf[:])
		st.next++
		st.blocks++
		st.pos, st.ok = 0, true
	}
	v := binary.LittleEndian.Uint64(st.buf[st.pos:])
	st.pos += 8
	return v
}

// Blocks returns how many 64-byte ChaCha20 blocks st has computed so
// far: the work of the draws made from it, which SampleFixed makes the
// same whatever the values drawn.
func (st *Stream) Blocks() uint64 { return st.blocks }

// word is the position, in words from the stream's start, of the next
// word Uint64 returns.
func (st *Stream) word() uint64 {
	if !st.ok {
		return st.next * 8
	}
	return (st.next-1)*8 + uint64(st.pos/8)
}
