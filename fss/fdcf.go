package fss

import (
	"fmt"
	"io"
)

// maxFieldComponents is the largest number m of F_p payload components a
// FieldKey may carry: its PRG uses 2m + 2 of the prgKeys fixed keys.
const maxFieldComponents = (prgKeys - 2) / 2

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

// Field PRG layout with m components: key 0 the left child seed, key 1+c
// the left child's value block of component c, key 1+m+c the right
// child's, key 2m+1 the right child seed. Every value is one whole 128-bit
// block, reduced mod p (convertField). The leaf value is the left value
// blocks of the leaf seed.
func fieldRightSeedKey(m int) int { return 2*m + 1 }

// expandFieldNode is G on the node with seed s for the field DCF: both
// children's seeds and control bits, and their values v[side][c].
func expandFieldNode(s block, m int, v [2][]Fp) (seeds [2]block, t [2]uint64) {
	var out [2][1]block
	hashEach(0, fieldRightSeedKey(m), []block{s}, out[0][:], out[1][:])
	for side := range out {
		seeds[side], t[side] = splitSeed(out[side][0])
	}
	var val [2][1]block
	for c := 0; c < m; c++ {
		hashEach(1+c, 1+m+c, []block{s}, val[0][:], val[1][:])
		v[0][c], v[1][c] = convertField(val[0][0]), convertField(val[1][0])
	}
	return seeds, t
}

// fieldLeaf writes to v the leaf value Convert(s^(n)) of the field DCF.
func fieldLeaf(s block, v []Fp) {
	var val [1]block
	for c := range v {
		hashEach(1+c, 1+c, []block{s}, val[:], nil)
		v[c] = convertField(val[0])
	}
}

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
// beyond n and m (up to the statistical distance of convertField, package
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
	k0 = &FieldKey{Key{party: 0, nbits: nbits, m: m, seed: s[0], cw: make([]uint64, nbits*(2+m)), final: make([]uint64, m)}}
	genFieldCorrections(&k0.k, s, alpha, beta)
	k1 = &FieldKey{Key{party: 1, nbits: nbits, m: m, seed: s[1], tcw: k0.k.tcw,
		cw: append([]uint64(nil), k0.k.cw...), final: append([]uint64(nil), k0.k.final...)}}
	return k0, k1, nil
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
