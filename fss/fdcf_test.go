package fss

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomFieldBeta returns m uniform field elements, with the edge values
// 0, 1 and p − 1 among the first.
func randomFieldBeta(r *rand.Rand, m int) []Fp {
	beta := make([]Fp, m)
	for c := range beta {
		beta[c] = Fp(r.Uint64N(Modulus))
	}
	edges := []Fp{Fp(Modulus - 1), 1, 0}
	copy(beta, edges[:min(m, len(edges))])
	return beta
}

// fieldReference is the brute-force comparison function β·1[x < α] over F_p.
func fieldReference(alpha uint64, beta []Fp, x uint64) []Fp {
	out := make([]Fp, len(beta))
	if x < alpha {
		copy(out, beta)
	}
	return out
}

// TestSampleField checks the rejection sampling of field values from PRG
// words: words not below p are skipped, and a stream with too few falls
// back to the first words reduced mod p.
func TestSampleField(t *testing.T) {
	const big = Modulus + 5 // rejected
	for _, tc := range []struct {
		name   string
		stream []uint64
		want   []Fp
	}{
		{"all below p", []uint64{1, Modulus - 1, 0, 7, 8}, []Fp{1, Fp(Modulus - 1), 0}},
		{"one rejected", []uint64{1, big, 2, 3, 9}, []Fp{1, 2, 3}},
		{"2^64-1 rejected", []uint64{^uint64(0), Modulus, 4, 5, 6}, []Fp{4, 5, 6}},
		{"exactly enough", []uint64{big, 1, big, 2, 3}, []Fp{1, 2, 3}},
		{"too few: reduced", []uint64{big, 1, big, big, 3}, []Fp{5, 1, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]Fp, len(tc.want))
			sampleField(tc.stream, got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("sampleField(%v) = %v, want %v", tc.stream, got, tc.want)
			}
		})
	}
	for _, w := range []uint64{0, Modulus - 1, Modulus, ^uint64(0)} {
		if got, want := rejected(w) == 1, w >= Modulus; got != want {
			t.Errorf("rejected(%#x) = %v, want %v", w, got, want)
		}
	}
}

// TestEvalFieldExhaustiveSmallDomains checks the field DCF against brute
// force at every x for every n ≤ 8, α at the ends and random.
func TestEvalFieldExhaustiveSmallDomains(t *testing.T) {
	r := rand.New(testRand(81))
	for n := 1; n <= 8; n++ {
		for _, m := range []int{1, 3, 4} {
			for _, alpha := range []uint64{0, 1<<n - 1, r.Uint64N(1 << n)} {
				t.Run(fmt.Sprintf("n=%d/m=%d/alpha=%d", n, m, alpha), func(t *testing.T) {
					beta := randomFieldBeta(r, m)
					k0, k1, err := GenField(alpha, beta, n, testRand(r.Uint64()))
					if err != nil {
						t.Fatal(err)
					}
					for x := uint64(0); x < 1<<n; x++ {
						checkFieldPoint(t, k0, k1, alpha, beta, x)
					}
				})
			}
		}
	}
}

// TestEvalFieldLargeDomains checks around α and at random points for n up
// to 64.
func TestEvalFieldLargeDomains(t *testing.T) {
	r := rand.New(testRand(82))
	for _, n := range []int{16, 33, 64} {
		alpha := r.Uint64() >> uint(64-n)
		beta := randomFieldBeta(r, 3)
		k0, k1, err := GenField(alpha, beta, n, testRand(r.Uint64()))
		if err != nil {
			t.Fatal(err)
		}
		last := ^uint64(0) >> uint(64-n)
		for _, x := range []uint64{0, alpha - 1, alpha, alpha + 1, last, r.Uint64() >> uint(64-n)} {
			if inDomain(x, n) {
				checkFieldPoint(t, k0, k1, alpha, beta, x)
			}
		}
	}
}

func checkFieldPoint(t *testing.T, k0, k1 *FieldKey, alpha uint64, beta []Fp, x uint64) {
	t.Helper()
	y0, err := EvalField(k0, x)
	if err != nil {
		t.Fatal(err)
	}
	y1, err := EvalField(k1, x)
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range fieldReference(alpha, beta, x) {
		if got := y0[c].Add(y1[c]); got != want {
			t.Fatalf("n=%d α=%d x=%d component %d: shares add to %d, want %d", k0.Bits(), alpha, x, c, got, want)
		}
	}
}

func TestGenFieldRejectsBadInput(t *testing.T) {
	for name, f := range map[string]func() error{
		"nbits 0":          func() error { _, _, err := GenField(0, []Fp{1}, 0, nil); return err },
		"alpha too big":    func() error { _, _, err := GenField(16, []Fp{1}, 4, nil); return err },
		"empty beta":       func() error { _, _, err := GenField(1, nil, 4, nil); return err },
		"beta too long":    func() error { _, _, err := GenField(1, make([]Fp, maxFieldComponents+1), 4, nil); return err },
		"beta not below p": func() error { _, _, err := GenField(1, []Fp{Fp(Modulus)}, 4, nil); return err },
		"x too big":        func() error { k, _, _ := GenField(1, []Fp{1}, 4, nil); _, err := EvalField(k, 16); return err },
		"nil key":          func() error { _, err := EvalField(nil, 0); return err },
	} {
		t.Run(name, func(t *testing.T) {
			if err := f(); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// TestOneFieldKeyLooksUniform is TestOneKeyLooksUniform for the field DCF:
// one key's full-domain shares, with a small β, pass the χ² tests of
// uniformity (a uniform element of F_p misses only the 2^32 − 1 words at
// the top of [0, 2^64), invisible to them), while the reconstructed
// β·1[x < α] fails them.
func TestOneFieldKeyLooksUniform(t *testing.T) {
	const n, m = 14, 3
	beta := []Fp{1, 2, 3}
	alpha := uint64(5000)
	k0, k1, err := GenField(alpha, beta, n, testRand(90))
	if err != nil {
		t.Fatal(err)
	}
	points := make([]uint64, 1<<n)
	for x := range points {
		points[x] = uint64(x)
	}
	out := [][]Fp{make([]Fp, len(points)*m), make([]Fp, len(points)*m)}
	for b, k := range []*FieldKey{k0, k1} {
		if err := EvalFieldBatch([]*FieldKey{k}, points, out[b:b+1]); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]func([]uint64) (float64, int){"bits": chiSquareBits, "low byte": chiSquareLowByte}
	for name, test := range tests {
		for b := range out {
			for c := 0; c < m; c++ {
				words := make([]uint64, len(points))
				for x := range words {
					words[x] = uint64(out[b][x*m+c])
				}
				if stat, df := test(words); stat > chiSquareLimit(df) {
					t.Errorf("party %d component %d: χ² %s = %.1f > %.1f (df %d)", b, c, name, stat, chiSquareLimit(df), df)
				}
			}
		}
		sum := make([]uint64, len(points))
		for x := range sum {
			sum[x] = uint64(out[0][x*m].Add(out[1][x*m]))
		}
		if stat, df := test(sum); stat <= chiSquareLimit(df) {
			t.Errorf("χ² %s of β·1[x<α] = %.1f, not above %.1f: the test has no power", name, stat, chiSquareLimit(df))
		}
	}
}

// TestStreamWords checks the field PRG's word streams, which fieldValues
// reads its value and spare blocks from, against the portable MMO hash
// under each key, for odd and even block counts.
func TestStreamWords(t *testing.T) {
	r := rand.New(testRand(86))
	s := block{r.Uint64(), r.Uint64()}
	var buf [16]byte
	for _, tc := range []struct{ first, blocks int }{{1, 1}, {1, 2}, {1, 3}, {fieldSpareKey(3, 0), fieldSpareBlocks}, {2, 5}} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			words := make([]uint64, 2*tc.blocks)
			streamWords(s, tc.first, tc.blocks, words)
			for j := range tc.blocks {
				h := hashPortable(tc.first+j, s, &buf)
				if words[2*j] != h[0] || words[2*j+1] != h[1] {
					t.Errorf("block %d: words %#x %#x, want H_%d(s) = %#x", j, words[2*j], words[2*j+1], tc.first+j, h)
				}
			}
		})
	}
}
