package fss

import (
	"encoding/binary"
	"fmt"
)

// keyVersion is the version byte of the key encoding.
const keyVersion = 1

// keyHeaderSize is the number of header bytes: version, party, nbits, m.
const keyHeaderSize = 4

// EncodedSize returns the length in bytes of an encoded key with the given
// domain bits n and payload components m:
// 4 + 16 + n·(16 + 8m) + 8m + ⌈2n/8⌉, i.e. the BCG+21 key size of
// λ + n(λ + ℓ + 2) + ℓ bits (λ = 128, ℓ = 64m) rounded up to bytes, plus the
// 4-byte header. It returns 0 for parameters out of range.
func EncodedSize(nbits, m int) int {
	if nbits < 1 || nbits > maxBits || m < 1 || m > maxComponents {
		return 0
	}
	return keyHeaderSize + 16 + nbits*(16+8*m) + 8*m + (2*nbits+7)/8
}

// MarshalBinary encodes the key as
//
//	version (1 byte) ‖ party b (1) ‖ n (1) ‖ m (1) ‖ s^(0) (16)
//	‖ for each level: sCW (16) ‖ VCW (8m) ‖ CW^(n+1) (8m)
//	‖ tCW bits (⌈2n/8⌉: bit 2d is tCW_L, bit 2d+1 is tCW_R of level d+1),
//
// all words little-endian. The encoding is canonical: the unused low bit of
// every sCW and the padding bits of the last byte are zero.
func (k *Key) MarshalBinary() ([]byte, error) {
	if k == nil {
		return nil, errNilKey
	}
	return k.marshal(keyVersion), nil
}

// marshal is MarshalBinary with the given version byte: the field DCF's
// keys share the layout under their own version.
func (k *Key) marshal(version byte) []byte {
	out := make([]byte, 0, EncodedSize(k.nbits, k.m))
	out = append(out, version, byte(k.party), byte(k.nbits), byte(k.m))
	out = binary.LittleEndian.AppendUint64(out, k.seed[0])
	out = binary.LittleEndian.AppendUint64(out, k.seed[1])
	for _, w := range k.cw {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	for _, w := range k.final {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	bits := make([]byte, (2*k.nbits+7)/8)
	for d := 0; d < k.nbits; d++ {
		for side := 0; side < 2; side++ {
			i := 2*d + side
			bits[i/8] |= byte(k.tcw[side]>>uint(d)&1) << uint(i%8)
		}
	}
	return append(out, bits...)
}

// Decode decodes a key encoded by MarshalBinary. It rejects, with an
// error, any input that is not exactly one canonical encoding: wrong
// version, party, n or m, truncated or oversize input, nonzero unused
// bits. Its errors match ErrMalformedKey (errors.Is).
func Decode(data []byte) (*Key, error) {
	k, err := decodeKey(data, keyVersion, maxComponents)
	if err != nil {
		return nil, fmt.Errorf("fss: decoding key: %w", err)
	}
	return k, nil
}

// decodeKey is Decode for the given version byte and largest m, without
// the package prefix.
func decodeKey(data []byte, wantVersion byte, maxM int) (*Key, error) {
	if len(data) < keyHeaderSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrMalformedKey, len(data), keyHeaderSize)
	}
	version, party, nbits, m := data[0], int(data[1]), int(data[2]), int(data[3])
	switch {
	case version != wantVersion:
		return nil, fmt.Errorf("%w: version %d, want %d", ErrMalformedKey, version, wantVersion)
	case party > 1:
		return nil, fmt.Errorf("%w: party bit %d, want 0 or 1", ErrMalformedKey, party)
	case nbits < 1 || nbits > maxBits:
		return nil, fmt.Errorf("%w: n = %d bits, want 1 to %d", ErrMalformedKey, nbits, maxBits)
	case m < 1 || m > maxM:
		return nil, fmt.Errorf("%w: m = %d components, want 1 to %d", ErrMalformedKey, m, maxM)
	}
	if want := EncodedSize(nbits, m); len(data) != want {
		return nil, fmt.Errorf("%w: %d bytes, want %d for n = %d, m = %d", ErrMalformedKey, len(data), want, nbits, m)
	}
	k := &Key{party: party, nbits: nbits, m: m, cw: make([]uint64, nbits*(2+m)), final: make([]uint64, m)}
	p := data[keyHeaderSize:]
	word := func() uint64 {
		w := binary.LittleEndian.Uint64(p)
		p = p[8:]
		return w
	}
	k.seed = block{word(), word()}
	for i := range k.cw {
		k.cw[i] = word()
		if i%k.stride() == 0 && k.cw[i]&1 != 0 {
			return nil, fmt.Errorf("%w: seed correction of level %d has its unused low bit set", ErrMalformedKey, i/k.stride()+1)
		}
	}
	for i := range k.final {
		k.final[i] = word()
	}
	for i := 0; i < 8*len(p); i++ {
		bit := uint64(p[i/8]>>uint(i%8)) & 1
		if i >= 2*nbits {
			if bit != 0 {
				return nil, fmt.Errorf("%w: padding bit %d of the control-bit corrections is set", ErrMalformedKey, i)
			}
			continue
		}
		k.tcw[i%2] |= bit << uint(i/2)
	}
	return k, nil
}
