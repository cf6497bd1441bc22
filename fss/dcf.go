package fss

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Gen returns the two keys of the distributed comparison function
// f_{α,β}(x) = β·1[x < α] on n-bit inputs, nbits = n ∈ [1, 64], α < 2^n,
// β ∈ (Z_{2^64})^m with 1 ≤ m ≤ maxComponents: for every x < 2^n,
// Eval(k0, x) + Eval(k1, x) = f_{α,β}(x) componentwise mod 2^64. The two
// 128-bit initial seeds are read from rand (crypto/rand when nil); each key
// alone is pseudorandom and reveals nothing about α or β beyond n and m.
func Gen(alpha uint64, beta []uint64, nbits int, rand io.Reader) (k0, k1 *Key, err error) {
	if nbits < 1 || nbits > maxBits {
		return nil, nil, fmt.Errorf("fss: Gen: nbits = %d, want 1 to %d", nbits, maxBits)
	}
	if !inDomain(alpha, nbits) {
		return nil, nil, fmt.Errorf("fss: Gen: alpha = %d is not below 2^%d: %w", alpha, nbits, ErrOutOfDomain)
	}
	m := len(beta)
	if m < 1 || m > maxComponents {
		return nil, nil, fmt.Errorf("fss: Gen: beta has %d components, want 1 to %d", m, maxComponents)
	}
	s, err := readSeeds(rand)
	if err != nil {
		return nil, nil, fmt.Errorf("fss: Gen: %w", err)
	}
	k0, k1 = keyPair(s, nbits, m, func(k *Key) { genCorrections(k, s, alpha, beta) })
	return k0, k1, nil
}

// keyPair returns the two parties' keys on the initial seeds s, for n =
// nbits and m components: fill writes the correction words into party
// 0's, and party 1's gets a copy of them.
func keyPair(s [2]block, nbits, m int, fill func(*Key)) (k0, k1 *Key) {
	k0 = &Key{party: 0, nbits: nbits, m: m, seed: s[0], cw: make([]uint64, nbits*(2+m)), final: make([]uint64, m)}
	fill(k0)
	k1 = &Key{party: 1, nbits: nbits, m: m, seed: s[1], tcw: k0.tcw,
		cw: append([]uint64(nil), k0.cw...), final: append([]uint64(nil), k0.final...)}
	return k0, k1
}

// readSeeds reads the two parties' 128-bit initial seeds from rand
// (crypto/rand when nil), 32 bytes, little-endian words.
func readSeeds(rand io.Reader) ([2]block, error) {
	if rand == nil {
		rand = crand.Reader
	}
	var buf [32]byte
	if _, err := io.ReadFull(rand, buf[:]); err != nil {
		return [2]block{}, fmt.Errorf("reading the initial seeds: %w", err)
	}
	return [2]block{
		{binary.LittleEndian.Uint64(buf[0:]), binary.LittleEndian.Uint64(buf[8:])},
		{binary.LittleEndian.Uint64(buf[16:]), binary.LittleEndian.Uint64(buf[24:])},
	}, nil
}

// genCorrections fills the correction words of k from the initial seeds
// s[0], s[1], following BCG+21 Fig. 3 (IACR ePrint 2020/1392).
func genCorrections(k *Key, s [2]block, alpha uint64, beta []uint64) {
	n, m := k.nbits, k.m
	t := [2]uint64{0, 1}
	vAlpha := make([]uint64, m)
	var v [2][2][]uint64 // v[party][side]: Convert of the value material
	for b := range v {
		for side := range v[b] {
			v[b][side] = make([]uint64, m)
		}
	}
	for d := 0; d < n; d++ {
		a := pathBit(alpha, n, d)
		keep, lose := int(a), int(1-a)
		var cs [2][2]block
		var ct [2][2]uint64
		for b := range cs {
			cs[b], ct[b] = expandNode(s[b], m, v[b])
		}
		cw := k.cw[d*k.stride() : (d+1)*k.stride()]
		neg := -t[1] // all ones when t1 = 1: (−1)^{t1}·y = negateIf(y, neg)
		for c := 0; c < m; c++ {
			vcw := v[1][lose][c] - v[0][lose][c] - vAlpha[c]
			if lose == 0 { // α_i = 1: every x with x_i = 0 here is below α
				vcw += beta[c]
			}
			vcw = negateIf(vcw, neg)
			cw[2+c] = vcw
			vAlpha[c] = vAlpha[c] - v[1][keep][c] + v[0][keep][c] + negateIf(vcw, neg)
		}
		stepGen(k, d, a, cs, ct, &s, &t)
	}
	var leaf [2][]uint64
	for b := range leaf {
		leaf[b] = make([]uint64, m)
		valueWords(s[b], 0, m, leaf[b])
	}
	neg := -t[1]
	for c := 0; c < m; c++ {
		k.final[c] = negateIf(leaf[1][c]-leaf[0][c]-vAlpha[c], neg)
	}
}

// stepGen ends level d of Gen (BCG+21 Fig. 3), after its value
// corrections, for α's bit a and both parties' children cs, control bits
// ct: it stores the seed and control-bit corrections of the level in k and
// moves both parties' seeds s and control bits t to the child on α's path.
func stepGen(k *Key, d int, a uint64, cs [2][2]block, ct [2][2]uint64, s *[2]block, t *[2]uint64) {
	keep, lose := a, 1-a
	sCW := block{cs[0][lose][0] ^ cs[1][lose][0], cs[0][lose][1] ^ cs[1][lose][1]}
	k.cw[d*k.stride()], k.cw[d*k.stride()+1] = sCW[0], sCW[1]
	tCW := [2]uint64{ct[0][0] ^ ct[1][0] ^ a ^ 1, ct[0][1] ^ ct[1][1] ^ a}
	k.tcw[0] |= tCW[0] << uint(d)
	k.tcw[1] |= tCW[1] << uint(d)
	for b := range s {
		mask := -t[b]
		s[b] = block{cs[b][keep][0] ^ sCW[0]&mask, cs[b][keep][1] ^ sCW[1]&mask}
		t[b] = ct[b][keep] ^ t[b]&tCW[keep]
	}
}

// ErrMalformedKey is matched by every error of Decode: the bytes are no
// canonical encoding of a key of this version.
var ErrMalformedKey = errors.New("malformed key")

// ErrOutOfDomain is matched by the errors for an input, bin or prefix
// outside the domain of a key or PrefixDomain.
var ErrOutOfDomain = errors.New("outside the domain")

// errNilKey is returned when a nil *Key is evaluated or encoded.
var errNilKey = errors.New("fss: nil key")

// Eval returns party k.Party()'s share of f_{α,β}(x): m words that add up
// componentwise mod 2^64 with the other key's share to β·1[x < α]. It
// expands the path of x only: per level the child seed and that child's
// ⌈m/2⌉ value blocks, then ⌈m/2⌉ blocks at the leaf, (n + 1)·⌈m/2⌉ + n
// AES blocks in all. Use SumBatch to evaluate many
// keys at many points.
func Eval(k *Key, x uint64) ([]uint64, error) {
	if k == nil {
		return nil, errNilKey
	}
	if !inDomain(x, k.nbits) {
		return nil, fmt.Errorf("fss: Eval: x = %d is not below 2^%d: %w", x, k.nbits, ErrOutOfDomain)
	}
	n, m := k.nbits, k.m
	out := make([]uint64, m)
	conv := make([]uint64, m)
	s, t := k.seed, uint64(k.party)
	for d := 0; d < n; d++ {
		side := pathBit(x, n, d)
		child, ct := expandChild(s, int(side), m, conv)
		mask := -t
		cw := k.cw[d*k.stride() : (d+1)*k.stride()]
		for c := 0; c < m; c++ {
			out[c] += conv[c] + cw[2+c]&mask
		}
		s = block{child[0] ^ cw[0]&mask, child[1] ^ cw[1]&mask}
		t = ct ^ t&(k.tcw[side]>>uint(d))&1
	}
	valueWords(s, 0, m, conv)
	neg := -uint64(k.party)
	for c := 0; c < m; c++ {
		out[c] = negateIf(out[c]+conv[c]+k.final[c]&-t, neg)
	}
	return out, nil
}
