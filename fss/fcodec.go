package fss

import "fmt"

// fieldKeyVersion is the version byte of the field key encoding: a
// FieldKey and a Key never decode as each other. Version 2 keys, whose
// PRG took one 128-bit block per field value, are refused: their shares
// differ.
const fieldKeyVersion = 3

// MarshalBinary encodes the field key in the layout of Key.MarshalBinary
// under version byte 3: every value correction word and CW^(n+1) is a
// field element, below Modulus, as 8 little-endian bytes. The length is
// EncodedSize(n, m).
func (k *FieldKey) MarshalBinary() ([]byte, error) {
	if k == nil {
		return nil, errNilKey
	}
	return k.k.marshal(fieldKeyVersion), nil
}

// DecodeField decodes a field key encoded by FieldKey.MarshalBinary,
// rejecting any input that is not exactly one canonical encoding (those of
// Decode, a field element not below Modulus, m above 32). Its errors match
// ErrMalformedKey.
func DecodeField(data []byte) (*FieldKey, error) {
	k, err := decodeKey(data, fieldKeyVersion, maxFieldComponents)
	if err == nil {
		err = checkFieldWords(k)
	}
	if err != nil {
		return nil, fmt.Errorf("fss: decoding field key: %w", err)
	}
	return &FieldKey{*k}, nil
}

// checkFieldWords reports a value correction or final word of k that is
// not a canonical field element.
func checkFieldWords(k *Key) error {
	for d := 0; d < k.nbits; d++ {
		for c, w := range k.cw[d*k.stride()+2 : (d+1)*k.stride()] {
			if !Fp(w).Valid() {
				return fmt.Errorf("%w: value correction of level %d, component %d, is %d, not below the modulus", ErrMalformedKey, d+1, c, w)
			}
		}
	}
	for c, w := range k.final {
		if !Fp(w).Valid() {
			return fmt.Errorf("%w: final correction of component %d is %d, not below the modulus", ErrMalformedKey, c, w)
		}
	}
	return nil
}
