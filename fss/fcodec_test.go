package fss

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGenFieldKnownAnswer pins GenField, the field key encoding and
// EvalField like TestGenKnownAnswer does for the Z_2^64 DCF: a change is a
// breaking change of every stored or sent field key.
func TestGenFieldKnownAnswer(t *testing.T) {
	const want = "390bb5a43635d7194e2e5df972436dffd79eb969fc05c210767967a9fc8ffd36"
	rand := newKATReader("fedecdf/fss field KAT v3")
	h := sha256.New()
	for _, tc := range []struct {
		nbits int
		alpha uint64
		beta  []Fp
	}{
		{1, 1, []Fp{1}},
		{4, 9, []Fp{1, 0, 1, Fp(Modulus - 1)}},
		{6, 0, []Fp{1, 1, 0, 3}},
		{11, 1024, []Fp{1, 0, 1, 0xdeadbeef}},
		{64, 1 << 62, []Fp{5}},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			k0, k1, err := GenField(tc.alpha, tc.beta, tc.nbits, rand)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []*FieldKey{k0, k1} {
				enc, err := k.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				h.Write(enc)
				for _, x := range katPoints(tc.nbits) {
					share, err := EvalField(k, x)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range share {
						h.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
					}
				}
			}
		})
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("GenField/Marshal/EvalField transcript hash = %s, want %s: the field DCF changed (a breaking change: bump the verified report's version and regenerate)", got, want)
	}
}

func TestFieldCodecRoundTrip(t *testing.T) {
	r := rand.New(testRand(88))
	for _, n := range []int{1, 11, 64} {
		k0, k1, err := GenField(r.Uint64()>>uint(64-n), randomFieldBeta(r, 4), n, testRand(r.Uint64()))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []*FieldKey{k0, k1} {
			enc, _ := k.MarshalBinary()
			if len(enc) != EncodedSize(n, 4) {
				t.Fatalf("n=%d: %d bytes, EncodedSize says %d", n, len(enc), EncodedSize(n, 4))
			}
			dec, err := DecodeField(enc)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := dec.MarshalBinary(); !bytes.Equal(enc, again) {
				t.Fatal("re-encoding differs")
			}
		}
	}
}

func TestDecodeFieldRejectsMalformed(t *testing.T) {
	k0, _, _ := GenField(3, []Fp{1, 2}, 4, testRand(89))
	good, _ := k0.MarshalBinary()
	z, _, _ := Gen(3, []uint64{1, 2}, 4, testRand(89))
	zEnc, _ := z.MarshalBinary()
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	valueAt := keyHeaderSize + 16 + 16 // level 1, component 0
	for name, data := range map[string][]byte{
		"empty":             {},
		"Z_2^64 key":        zEnc,
		"version 2 key":     edit(func(b []byte) []byte { b[0] = 2; return b }),
		"truncated":         good[:len(good)-1],
		"trailing byte":     append(bytes.Clone(good), 0),
		"m above 32":        edit(func(b []byte) []byte { b[3] = 33; return b }),
		"value word p":      edit(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[valueAt:], Modulus); return b }),
		"final word 2^64-1": edit(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[len(b)-1-16:], ^uint64(0)); return b }),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeField(data); !errors.Is(err, ErrMalformedKey) {
				t.Errorf("DecodeField: %v, want ErrMalformedKey", err)
			}
		})
	}
	if _, err := Decode(good); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("Decode of a field key: %v, want ErrMalformedKey", err)
	}
}

func FuzzDecodeField(f *testing.F) {
	for _, p := range []struct{ n, m int }{{1, 1}, {6, 4}, {11, 4}} {
		k0, k1, err := GenField(1, make([]Fp, p.m), p.n, testRand(uint64(p.n)))
		if err != nil {
			f.Fatal(err)
		}
		for _, k := range []*FieldKey{k0, k1} {
			enc, _ := k.MarshalBinary()
			f.Add(enc)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{fieldKeyVersion, 0, 64, 32})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCanonical(t, data, DecodeField, func(k *FieldKey) error { _, err := EvalField(k, 0); return err })
	})
}
