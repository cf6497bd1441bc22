package fss

import (
	"fmt"
	"io"
)

// maxFieldComponents is the largest number m of F_p payload components a
// FieldKey may carry; its PRG uses m + 4 of the prgKeys fixed keys.
const maxFieldComponents = 32

// FieldKey is one party's share of a distributed comparison function
// f_{α,β}(x) = β·1[x < α] on [0, 2^Bits()) with β ∈ F_p^Components(),
// p = Modulus: the DCF of BCG+21 over the group F_p instead of Z_{2^64}
// (package doc, "The field DCF"). Its correction words are field elements
// in the layout of Key.
type FieldKey struct{ k Key }

// Party returns the party bit b ∈ {0, 1}: the server that holds the key.
func (k *FieldKey) Party() int { return k.k.party }

// Bits returns n: the key evaluates inputs x ∈ [0, 2^n).
func (k *FieldKey) Bits() int { return k.k.nbits }

// Components returns m, the number of field elements of β and of every
// output.
func (k *FieldKey) Components() int { return k.k.m }

// The field PRG has the layout of the Z_2^64 one (prg.go) plus two spare
// keys: with m components, key 0 the left child seed, key 1+j value block
// j < m, key 1+m the right child seed, keys 2+m and 3+m the spare blocks.
// A node's 2m values (m for the left child, then m for the right) are the
// first 2m words below p of its stream: the words of value blocks 0 … m−1,
// then of the two spare blocks (sampleField). The leaf's m values are the
// first m of the stream of value blocks 0 … ⌈m/2⌉−1, then the spares.
const fieldSpareBlocks = 2

// fieldSpareKey returns the fixed key of spare block i of the field PRG.
func fieldSpareKey(m, i int) int { return 2 + m + i }

// fieldValues writes to v the first len(v) words below p of the stream of
// seed s: the words of value blocks 0 … blocks−1, then the spare blocks,
// which are computed only when the value blocks fall short.
func fieldValues(s block, m, blocks int, v []Fp) {
	var words [2 * (maxFieldComponents + fieldSpareBlocks)]uint64
	streamWords(s, 1, blocks, words[:])
	short := len(v)
	for _, w := range words[:2*blocks] {
		short -= int(1 - rejected(w))
	}
	if short <= 0 {
		sampleField(words[:2*blocks], v)
		return
	}
	streamWords(s, fieldSpareKey(m, 0), fieldSpareBlocks, words[2*blocks:])
	sampleField(words[:2*(blocks+fieldSpareBlocks)], v)
}

// streamWords writes to words the 2·blocks words of H_{first}(s), …,
// H_{first+blocks−1}(s), two fixed keys per AES call.
func streamWords(s block, first, blocks int, words []uint64) {
	var out [2][1]block
	for j := 0; j < blocks; j += 2 {
		second := []block(nil)
		if j+1 < blocks {
			second = out[1][:]
		}
		hashEach(first+j, first+j+1, []block{s}, out[0][:], second)
		words[2*j], words[2*j+1] = out[0][0][0], out[0][0][1]
		if second != nil {
			words[2*j+2], words[2*j+3] = out[1][0][0], out[1][0][1]
		}
	}
}

// sampleField writes to v the first len(v) words of stream below p
// (rejection sampling: each is then uniform on F_p). In the event that
// fewer are, of probability below 2^-136 for the streams of fieldValues
// (at least 5 of at most 68 words ≥ p, each with probability < 2^-32),
// v holds the first len(v) words reduced mod p instead.
func sampleField(stream []uint64, v []Fp) {
	j := 0
	for _, w := range stream {
		if j == len(v) {
			return
		}
		if w < Modulus {
			v[j] = Fp(w)
			j++
		}
	}
	if j == len(v) {
		return
	}
	for i := range v {
		v[i] = Fp(stream[i] % Modulus)
	}
}

// expandFieldNode is G on the node with seed s for the field DCF: both
// children's seeds and control bits, and their values v[side][c].
func expandFieldNode(s block, m int, v [2][]Fp) (seeds [2]block, t [2]uint64) {
	var out [2][1]block
	hashEach(0, rightSeedKey(m), []block{s}, out[0][:], out[1][:])
	for side := range out {
		seeds[side], t[side] = splitSeed(out[side][0])
	}
	var vals [2 * maxFieldComponents]Fp
	fieldValues(s, m, m, vals[:2*m])
	copy(v[0], vals[:m])
	copy(v[1], vals[m:2*m])
	return seeds, t
}

// fieldLeaf writes to v the leaf value Convert(s^(n)) of the field DCF.
func fieldLeaf(s block, v []Fp) {
	fieldValues(s, len(v), fieldLeafBlocks(len(v)), v)
}

// fieldLeafBlocks is the number of value blocks of a leaf with m
// components: ⌈m/2⌉.
func fieldLeafBlocks(m int) int { return (m + 1) / 2 }

// negateFieldIf returns −x when t = 1 and x when t = 0.
func negateFieldIf(x Fp, t uint64) Fp {
	return Fp(pick(t, uint64(x.Neg()), uint64(x)))
}

// GenField returns the two keys of the distributed comparison function
// f_{α,β}(x) = β·1[x < α] on n-bit inputs over F_p: for every x < 2^n,
// EvalField(k0, x) + EvalField(k1, x) = f_{α,β}(x) componentwise mod p.
// nbits = n ∈ [1, 64], α < 2^n, β ∈ F_p^m with 1 ≤ m ≤ 32, every β_c
// below Modulus. The two 128-bit initial seeds are read from rand
// (crypto/rand when nil); each key alone reveals nothing about α or β
// beyond n and m (up to the statistical distance of sampleField, package
// doc).
func GenField(alpha uint64, beta []Fp, nbits int, rand io.Reader) (k0, k1 *FieldKey, err error) {
	m := len(beta)
	switch {
	case nbits < 1 || nbits > maxBits:
		return nil, nil, fmt.Errorf("fss: GenField: nbits = %d, want 1 to %d", nbits, maxBits)
	case !inDomain(alpha, nbits):
		return nil, nil, fmt.Errorf("fss: GenField: alpha = %d is not below 2^%d: %w", alpha, nbits, ErrOutOfDomain)
	case m < 1 || m > maxFieldComponents:
		return nil, nil, fmt.Errorf("fss: GenField: beta has %d components, want 1 to %d", m, maxFieldComponents)
	}
	for c, b := range beta {
		if !b.Valid() {
			return nil, nil, fmt.Errorf("fss: GenField: beta[%d] = %d is not below the modulus %d", c, uint64(b), Modulus)
		}
	}
	s, err := readSeeds(rand)
	if err != nil {
		return nil, nil, fmt.Errorf("fss: GenField: %w", err)
	}
	a, b := keyPair(s, nbits, m, func(k *Key) { genFieldCorrections(k, s, alpha, beta) })
	return &FieldKey{*a}, &FieldKey{*b}, nil
}

// genFieldCorrections is genCorrections over F_p (BCG+21 Fig. 3, restated
// in the package doc), with the field PRG.
func genFieldCorrections(k *Key, s [2]block, alpha uint64, beta []Fp) {
	n, m := k.nbits, k.m
	t := [2]uint64{0, 1}
	vAlpha := make([]Fp, m)
	var v [2][2][]Fp // v[party][side]
	for b := range v {
		v[b] = [2][]Fp{make([]Fp, m), make([]Fp, m)}
	}
	for d := 0; d < n; d++ {
		a := pathBit(alpha, n, d)
		keep, lose := int(a), int(1-a)
		var cs [2][2]block
		var ct [2][2]uint64
		for b := range cs {
			cs[b], ct[b] = expandFieldNode(s[b], m, v[b])
		}
		cw := k.cw[d*k.stride() : (d+1)*k.stride()]
		for c := 0; c < m; c++ {
			vcw := v[1][lose][c].Sub(v[0][lose][c]).Sub(vAlpha[c])
			if lose == 0 { // α_i = 1: every x with x_i = 0 here is below α
				vcw = vcw.Add(beta[c])
			}
			vcw = negateFieldIf(vcw, t[1])
			cw[2+c] = uint64(vcw)
			vAlpha[c] = vAlpha[c].Sub(v[1][keep][c]).Add(v[0][keep][c]).Add(negateFieldIf(vcw, t[1]))
		}
		stepGen(k, d, a, cs, ct, &s, &t)
	}
	var leaf [2][]Fp
	for b := range leaf {
		leaf[b] = make([]Fp, m)
		fieldLeaf(s[b], leaf[b])
	}
	for c := 0; c < m; c++ {
		k.final[c] = uint64(negateFieldIf(leaf[1][c].Sub(leaf[0][c]).Sub(vAlpha[c]), t[1]))
	}
}

// EvalField returns party k.Party()'s share of f_{α,β}(x): m field
// elements that add up componentwise mod p with the other key's share to
// β·1[x < α]. It expands the path of x only; FieldPrefixes evaluates many
// keys over a whole domain.
func EvalField(k *FieldKey, x uint64) ([]Fp, error) {
	if k == nil {
		return nil, errNilKey
	}
	key := &k.k
	if !inDomain(x, key.nbits) {
		return nil, fmt.Errorf("fss: EvalField: x = %d is not below 2^%d: %w", x, key.nbits, ErrOutOfDomain)
	}
	n, m := key.nbits, key.m
	out := make([]Fp, m)
	var v [2][]Fp
	v[0], v[1] = make([]Fp, m), make([]Fp, m)
	s, t := key.seed, uint64(key.party)
	for d := 0; d < n; d++ {
		side := pathBit(x, n, d)
		seeds, ts := expandFieldNode(s, m, v)
		mask := -t
		cw := key.cw[d*key.stride() : (d+1)*key.stride()]
		for c := 0; c < m; c++ {
			out[c] = out[c].Add(v[side][c]).Add(Fp(cw[2+c] & mask))
		}
		s = block{seeds[side][0] ^ cw[0]&mask, seeds[side][1] ^ cw[1]&mask}
		t = ts[side] ^ t&(key.tcw[side]>>uint(d))&1
	}
	fieldLeaf(s, v[0])
	for c := 0; c < m; c++ {
		out[c] = negateFieldIf(out[c].Add(v[0][c]).Add(Fp(key.final[c]&-t)), uint64(key.party))
	}
	return out, nil
}
