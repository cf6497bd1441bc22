package fss

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestPrefixDomainGivesECDFPrefixSums(t *testing.T) {
	r := rand.New(testRand(30))
	for _, bins := range []int{1, 2, 7, 8, 100} {
		dom, err := NewPrefixDomain(bins)
		if err != nil {
			t.Fatal(err)
		}
		if bins >= 1<<dom.Bits() {
			t.Fatalf("%d bins do not fit below 2^%d", bins, dom.Bits())
		}
		m := 2
		var k0, k1 []*Key
		want := make([]uint64, bins*m)
		for range 25 {
			b := r.IntN(bins)
			beta := randomBeta(r, m)
			a, c, err := dom.Gen(b, beta, testRand(r.Uint64()))
			if err != nil {
				t.Fatal(err)
			}
			k0, k1 = append(k0, a), append(k1, c)
			for j := b; j < bins; j++ {
				want[j*m] += beta[0]
				want[j*m+1] += beta[1]
			}
		}
		prefixes := make([]int, bins)
		for j := range prefixes {
			prefixes[j] = j
		}
		acc := make([]uint64, bins*m)
		if err := dom.SumPrefixes(k0, prefixes, acc); err != nil {
			t.Fatal(err)
		}
		if err := dom.SumPrefixes(k1, prefixes, acc); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if acc[i] != want[i] {
				t.Fatalf("%d bins: prefix %d component %d: %d, want %d", bins, i/m, i%m, acc[i], want[i])
			}
		}
	}
}

func TestPrefixDomainAlphaAndPoint(t *testing.T) {
	for _, bins := range []int{1, 5, 8} {
		dom, _ := NewPrefixDomain(bins)
		for b := 0; b < bins; b++ {
			alpha, err := dom.alpha(b)
			if err != nil {
				t.Fatal(err)
			}
			k0, k1, err := Gen(alpha, []uint64{7}, dom.Bits(), testRand(uint64(b)))
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j < bins; j++ {
				x, _ := dom.point(j)
				y0, _ := Eval(k0, x)
				y1, _ := Eval(k1, x)
				want := uint64(0)
				if b <= j {
					want = 7
				}
				if y0[0]+y1[0] != want {
					t.Fatalf("%d bins, bin %d, prefix %d: %d, want %d", bins, b, j, y0[0]+y1[0], want)
				}
			}
		}
	}
}

func TestPrefixDomainRejectsBadInput(t *testing.T) {
	if _, err := NewPrefixDomain(0); err == nil {
		t.Error("0 bins accepted")
	}
	dom, _ := NewPrefixDomain(10)
	if _, _, err := dom.Gen(10, []uint64{1}, testRand(1)); !errors.Is(err, ErrOutOfDomain) || strings.Count(err.Error(), "fss: ") != 1 {
		t.Error("bin 10 of 10 accepted")
	}
	if _, err := dom.alpha(-1); !errors.Is(err, ErrOutOfDomain) {
		t.Error("bin -1 accepted")
	}
	if err := dom.SumPrefixes(nil, []int{10}, make([]uint64, 1)); !errors.Is(err, ErrOutOfDomain) || strings.Count(err.Error(), "fss: ") != 1 {
		t.Error("prefix 10 of 10 accepted")
	}
	k0, _, _ := dom.Gen(3, []uint64{1}, testRand(31))
	if err := dom.SumPrefixes([]*Key{k0}, []int{3, 2}, make([]uint64, 2)); err == nil {
		t.Error("decreasing prefixes accepted")
	}
	wide, _, _ := Gen(3, []uint64{1}, 8, testRand(32))
	if err := dom.SumPrefixes([]*Key{wide}, []int{3}, make([]uint64, 1)); err == nil {
		t.Error("key of the wrong width accepted")
	}
}
