package noise

import (
	"encoding/binary"
	"sync"
)

// FixedWorkSampler is a sampler whose draws can be made with fixed work
// (SampleFixed): DiscreteLaplace and DiscreteGaussian.
type FixedWorkSampler interface {
	// Sample draws one value from src.
	Sample(src Source) int64
	// WordBudget is the number of stream words a fixed-work draw
	// computes (a multiple of 8: whole ChaCha20 blocks), chosen from
	// the public scale so that a draw needs more with probability at
	// most 2^−40 (words.go).
	WordBudget() int
}

// SampleFixed draws one value of s from src with fixed work, the value
// s.Sample(src) would draw. From a Stream it computes, at once, the
// WordBudget()/8 + 1 ChaCha20 blocks from the one holding the stream's
// position (at least WordBudget() words, however the position falls in
// its block), lets s read them from memory and sets the stream after the
// words s read, exactly where s.Sample would leave it: so the draws that
// follow on the same stream are unchanged too, and a release's noise is
// value for value the one the stability contract pins. Only a draw that
// needs more words than computed reads on, block by block, and takes
// longer: an event of probability at most 2^−40 whatever the scale
// (WordTailBound, derived in words.go). Past the budget the draw is
// still exact (the sampler reads the same words in the same order); only
// its time then depends on the value. What still varies with the value
// is the sampler's own arithmetic on the words it reads from memory.
//
// From another Source it reads WordBudget() words first, then s reads
// them and on: the value is s's, but the words left unread are lost to
// later draws from src (a fresh source per draw, as tests use).
func SampleFixed(s FixedWorkSampler, src Source) int64 {
	if st, ok := src.(*Stream); ok {
		return st.sampleFixed(s)
	}
	words := make([]byte, 8*s.WordBudget())
	for i := 0; i < len(words); i += 8 {
		binary.LittleEndian.PutUint64(words[i:], src.Uint64())
	}
	return s.Sample(&prefetched{words: words, src: src})
}

// keystreamPool holds the buffers of fixed-work draws.
var keystreamPool = sync.Pool{New: func() any { return new([]byte) }}

// sampleFixed is SampleFixed from st.
func (st *Stream) sampleFixed(s FixedWorkSampler) int64 {
	n := s.WordBudget()/8 + 1 // blocks
	start := st.word()
	first := start / 8
	bufp := keystreamPool.Get().(*[]byte)
	defer keystreamPool.Put(bufp)
	if cap(*bufp) < 64*n {
		*bufp = make([]byte, 64*n)
	}
	ks := (*bufp)[:64*n]
	clear(ks)
	st.c = st.cipherAt(first)
	st.c.XORKeyStream(ks, ks)
	st.next += uint64(n)
	st.blocks += uint64(n)
	st.ok, st.pos = true, len(st.buf) // buf is spent: reading on computes block first+n
	p := &prefetched{words: ks[8*(start%8):], src: st}
	v := s.Sample(p)
	if len(p.words) == 0 {
		return v // read on: st stands after the words read
	}
	// Set st after the words read: buf their last block, from memory.
	at := start + uint64(len(ks)-8*int(start%8)-len(p.words))/8
	block := at / 8
	copy(st.buf[:], ks[64*(block-first):])
	st.c = st.cipherAt(block + 1)
	st.pos = 8 * int(at%8)
	return v
}

// prefetched is a Source that reads words (little-endian), then src.
type prefetched struct {
	words []byte
	src   Source
}

func (p *prefetched) Uint64() uint64 {
	if len(p.words) == 0 {
		return p.src.Uint64()
	}
	w := binary.LittleEndian.Uint64(p.words)
	p.words = p.words[8:]
	return w
}
