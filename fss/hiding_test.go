package fss

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// chiSquareBits returns Pearson's χ² statistic of the hypothesis that every
// bit of the words is a fair coin, summed over the 64 bit positions: under
// it, χ² with 64 degrees of freedom (the bits of a pseudorandom word are
// independent).
func chiSquareBits(words []uint64) (stat float64, df int) {
	n := float64(len(words))
	for bit := 0; bit < 64; bit++ {
		ones := 0
		for _, w := range words {
			ones += int(w >> uint(bit) & 1)
		}
		d := float64(ones) - n/2
		stat += d * d / (n / 4)
	}
	return stat, 64
}

// chiSquareLowByte returns Pearson's χ² statistic of the low bytes of the
// words against the uniform distribution on 256 values (255 d.f.).
func chiSquareLowByte(words []uint64) (stat float64, df int) {
	var counts [256]float64
	for _, w := range words {
		counts[byte(w)]++
	}
	e := float64(len(words)) / 256
	for _, c := range counts {
		stat += (c - e) * (c - e) / e
	}
	return stat, 255
}

// chiSquareLimit is the mean plus five standard deviations of χ²_df.
func chiSquareLimit(df int) float64 {
	return float64(df) + 5*math.Sqrt(2*float64(df))
}

// TestOneKeyLooksUniform is a smoke test of hiding: the full-domain
// outputs of one key alone, with a small β that any leak would expose,
// pass χ² tests of uniformity (bits and low byte), while the reconstructed
// outputs β·1[x < α] fail them (the tests have power).
func TestOneKeyLooksUniform(t *testing.T) {
	const n, m = 14, 3
	beta := []uint64{1, 2, 3}
	alpha := uint64(5000)
	k0, k1, err := Gen(alpha, beta, n, testRand(50))
	if err != nil {
		t.Fatal(err)
	}
	points := make([]uint64, 1<<n)
	for x := range points {
		points[x] = uint64(x)
	}
	shares := [2][]uint64{make([]uint64, len(points)*m), make([]uint64, len(points)*m)}
	for b, k := range []*Key{k0, k1} {
		if err := SumBatch([]*Key{k}, points, shares[b], 0); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]func([]uint64) (float64, int){"bits": chiSquareBits, "low byte": chiSquareLowByte}
	for name, test := range tests {
		for b := range shares {
			for c := 0; c < m; c++ {
				words := make([]uint64, len(points))
				for x := range words {
					words[x] = shares[b][x*m+c]
				}
				stat, df := test(words)
				if limit := chiSquareLimit(df); stat > limit {
					t.Errorf("party %d component %d: χ² %s = %.1f > %.1f (df %d)", b, c, name, stat, limit, df)
				}
			}
		}
		sum := make([]uint64, len(points))
		for x := range sum {
			sum[x] = shares[0][x*m] + shares[1][x*m]
			if want := reference(alpha, beta, uint64(x))[0]; sum[x] != want {
				t.Fatalf("full domain: shares at %d add to %d, want %d", x, sum[x], want)
			}
		}
		if stat, df := test(sum); stat <= chiSquareLimit(df) {
			t.Errorf("χ² %s of β·1[x<α] = %.1f, not above %.1f: the test has no power", name, stat, chiSquareLimit(df))
		}
	}
}

func TestGenReproducibleFromSeedSource(t *testing.T) {
	encode := func(k *Key) []byte {
		b, err := k.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a0, a1, _ := Gen(9, []uint64{4, 5}, 12, testRand(60))
	b0, b1, _ := Gen(9, []uint64{4, 5}, 12, testRand(60))
	if !bytes.Equal(encode(a0), encode(b0)) || !bytes.Equal(encode(a1), encode(b1)) {
		t.Error("keys from the same deterministic source differ")
	}
	c0, c1, _ := Gen(9, []uint64{4, 5}, 12, nil)
	d0, d1, _ := Gen(9, []uint64{4, 5}, 12, nil)
	if bytes.Equal(encode(c0), encode(d0)) || bytes.Equal(encode(c1), encode(d1)) {
		t.Error("two keys from crypto/rand are equal")
	}
	if bytes.Equal(encode(a0)[4:20], encode(a1)[4:20]) {
		t.Error("the two parties' initial seeds are equal")
	}
}

func TestGenRejectsBadInput(t *testing.T) {
	for name, f := range map[string]func() error{
		"nbits 0":       func() error { _, _, err := Gen(0, []uint64{1}, 0, nil); return err },
		"nbits 65":      func() error { _, _, err := Gen(0, []uint64{1}, 65, nil); return err },
		"alpha too big": func() error { _, _, err := Gen(16, []uint64{1}, 4, nil); return err },
		"empty beta":    func() error { _, _, err := Gen(1, nil, 4, nil); return err },
		"beta too long": func() error { _, _, err := Gen(1, make([]uint64, maxComponents+1), 4, nil); return err },
		"short source":  func() error { _, _, err := Gen(1, []uint64{1}, 4, bytes.NewReader(make([]byte, 31))); return err },
		"x too big":     func() error { k, _, _ := Gen(1, []uint64{1}, 4, nil); _, err := Eval(k, 16); return err },
		"nil key":       func() error { _, err := Eval(nil, 0); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(name, "too big") && !errors.Is(err, ErrOutOfDomain) {
			t.Errorf("%s: %v, want ErrOutOfDomain", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
