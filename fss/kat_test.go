package fss

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"

	"golang.org/x/crypto/chacha20"
)

// katReader is a deterministic io.Reader: the ChaCha20 keystream under
// the key SHA-256(label) and a zero nonce.
type katReader struct{ c *chacha20.Cipher }

func newKATReader(label string) *katReader {
	key := sha256.Sum256([]byte(label))
	c, err := chacha20.NewUnauthenticatedCipher(key[:], make([]byte, chacha20.NonceSize))
	if err != nil {
		panic(err)
	}
	return &katReader{c}
}

func (r *katReader) Read(p []byte) (int, error) {
	clear(p)
	r.c.XORKeyStream(p, p)
	return len(p), nil
}

// TestGenKnownAnswer pins Gen, the key encoding and Eval: SHA-256 over
// the encoded keys of Gen under a deterministic reader and both keys'
// shares at every point (n ≤ 6) or at 64 spread points. Parties' keys
// and servers' stored uploads depend on all three: a change here is a
// breaking change of the protocol version (internal/protocol.Version).
func TestGenKnownAnswer(t *testing.T) {
	const want = "2ab3a453f2f12b76022c30cc864f0f57a114c835ec34260c758dfa2dd7a78261"
	rand := newKATReader("fedecdf/fss KAT v1")
	h := sha256.New()
	for _, tc := range []struct {
		nbits int
		alpha uint64
		beta  []uint64
	}{
		{1, 1, []uint64{1}},
		{4, 9, []uint64{1, 0, 1, 1 << 31}},
		{6, 0, []uint64{1, 1, 0, 3}},
		{11, 1027, []uint64{1, 0, 1, 0xdeadbeef}},
		{16, 40000, []uint64{^uint64(0), 7, 1 << 63}},
		{64, 1 << 62, []uint64{5}},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			k0, k1, err := Gen(tc.alpha, tc.beta, tc.nbits, rand)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []*Key{k0, k1} {
				enc, err := k.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				h.Write(enc)
				for _, x := range katPoints(tc.nbits) {
					share, err := Eval(k, x)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range share {
						h.Write(binary.LittleEndian.AppendUint64(nil, v))
					}
				}
			}
		})
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("Gen/Marshal/Eval transcript hash = %s, want %s: the DCF changed (a breaking protocol change: bump protocol.Version and regenerate)", got, want)
	}
}

// katPoints returns every input below 2^nbits for nbits ≤ 6, else 64
// points spread over the domain with both ends.
func katPoints(nbits int) []uint64 {
	if nbits <= 6 {
		pts := make([]uint64, 1<<nbits)
		for i := range pts {
			pts[i] = uint64(i)
		}
		return pts
	}
	last := ^uint64(0) >> (64 - nbits)
	pts := make([]uint64, 64)
	for i := range pts {
		pts[i] = last / 63 * uint64(i)
	}
	pts[63] = last
	return pts
}
