package fss

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEncodedSizeWithinBCG21(t *testing.T) {
	for _, n := range []int{1, 8, 16, 32, 64} {
		for _, m := range []int{1, 3, 8} {
			ell := 64 * m
			bitsBCG := 128 + n*(128+ell+2) + ell
			got, bound := EncodedSize(n, m), (bitsBCG+7)/8+keyHeaderSize
			if got > bound {
				t.Errorf("n=%d m=%d: %d bytes, BCG+21 bound %d", n, m, got, bound)
			}
		}
	}
	if got := EncodedSize(16, 3); got != 688 {
		t.Errorf("EncodedSize(16, 3) = %d, want 688 = ⌈5472/8⌉ + 4", got)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	r := rand.New(testRand(10))
	for _, n := range []int{1, 3, 7, 16, 64} {
		for _, m := range []int{1, 3} {
			alpha := r.Uint64() >> uint(64-n)
			beta := randomBeta(r, m)
			k0, k1, err := Gen(alpha, beta, n, testRand(r.Uint64()))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []*Key{k0, k1} {
				enc, err := k.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if len(enc) != EncodedSize(n, m) {
					t.Fatalf("n=%d m=%d: encoded %d bytes, EncodedSize says %d", n, m, len(enc), EncodedSize(n, m))
				}
				dec, err := Decode(enc)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := dec.MarshalBinary()
				if !bytes.Equal(enc, again) {
					t.Fatalf("n=%d m=%d party %d: re-encoding differs", n, m, k.Party())
				}
				for _, x := range []uint64{0, alpha, r.Uint64() >> uint(64-n)} {
					a, _ := Eval(k, x)
					b, _ := Eval(dec, x)
					if !slices.Equal(a, b) {
						t.Fatalf("decoded key evaluates differently at %d", x)
					}
				}
			}
		}
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	k0, _, err := Gen(5, []uint64{1, 2, 3}, 6, testRand(11))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := k0.MarshalBinary()
	for i := 0; i < len(enc); i++ {
		if _, err := Decode(enc[:i]); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("truncation to %d of %d bytes accepted", i, len(enc))
		}
	}
	for b := 0; b < 256; b++ {
		if _, err := Decode(append(slices.Clone(enc), byte(b))); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("extension by byte %#x accepted", b)
		}
	}
	mutate := func(name string, f func([]byte)) {
		bad := slices.Clone(enc)
		f(bad)
		if _, err := Decode(bad); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("%s accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	mutate("version 0", func(b []byte) { b[0] = 0 })
	mutate("version 2", func(b []byte) { b[0] = 2 })
	mutate("party 2", func(b []byte) { b[1] = 2 })
	mutate("n = 0", func(b []byte) { b[2] = 0 })
	mutate("n = 65", func(b []byte) { b[2] = 65 })
	mutate("n = 5 (size mismatch)", func(b []byte) { b[2] = 5 })
	mutate("m = 0", func(b []byte) { b[3] = 0 })
	mutate("m = 65", func(b []byte) { b[3] = 65 })
	mutate("m = 1 (size mismatch)", func(b []byte) { b[3] = 1 })
	mutate("sCW low bit", func(b []byte) { b[keyHeaderSize+16] |= 1 })
	mutate("padding bit", func(b []byte) { b[len(b)-1] |= 0x80 })
	if _, err := (*Key)(nil).MarshalBinary(); err == nil {
		t.Error("nil key encoded")
	}
}

func FuzzDecode(f *testing.F) {
	for _, p := range []struct{ n, m int }{{1, 1}, {6, 3}, {16, 3}} {
		k0, k1, err := Gen(1, make([]uint64, p.m), p.n, testRand(uint64(p.n)))
		if err != nil {
			f.Fatal(err)
		}
		for _, k := range []*Key{k0, k1} {
			enc, _ := k.MarshalBinary()
			f.Add(enc)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{keyVersion, 0, 64, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCanonical(t, data, Decode, func(k *Key) error { _, err := Eval(k, 0); return err })
	})
}

// checkCanonical is the body of the key decoders' fuzz tests: decode
// refuses data with an error matching ErrMalformedKey, or accepts a key
// that encodes back to data and evaluates.
func checkCanonical[K interface{ MarshalBinary() ([]byte, error) }](t *testing.T, data []byte, decode func([]byte) (K, error), eval func(K) error) {
	k, err := decode(data)
	if err != nil {
		if !errors.Is(err, ErrMalformedKey) {
			t.Fatalf("error %v does not match ErrMalformedKey", err)
		}
		return
	}
	enc, err := k.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, data) {
		t.Fatalf("accepted a non-canonical encoding")
	}
	if err := eval(k); err != nil {
		t.Fatal(err)
	}
}
