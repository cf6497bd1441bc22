package ecdf

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

func TestHistogramPrefixECDF(t *testing.T) {
	h, err := Histogram([]int{2, 1, 2, 4, 2}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 3, 0, 1}; !slices.Equal(h, want) {
		t.Fatalf("Histogram = %v, want %v", h, want)
	}
	if c, want := PrefixCounts(h), []int64{1, 4, 4, 5}; !slices.Equal(c, want) {
		t.Fatalf("PrefixCounts = %v, want %v", c, want)
	}
	if f, want := ECDF(h), []float64{0.2, 0.8, 0.8, 1}; !slices.Equal(f, want) {
		t.Fatalf("ECDF = %v, want %v", f, want)
	}
	for _, bad := range [][]int{{0}, {5}, {-1}} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			if _, err := Histogram(bad, 4); err == nil || !strings.Contains(err.Error(), "instance #1") {
				t.Errorf("Histogram(%v): error %v", bad, err)
			}
		})
	}
	if _, err := Histogram(nil, 0); err == nil {
		t.Error("Histogram accepted 0 bins")
	}
}

func seedOf(b byte) noise.Seed { return noise.Seed{b} }

func TestPrivateValues(t *testing.T) {
	hist := []int64{3, 0, 5, 2}
	m := uniformMechanism{bins: 4, a: 3}
	p, err := NewPrivate(m, hist, seedOf(1))
	if err != nil {
		t.Fatal(err)
	}
	rel := m.NewRelease(seedOf(1))
	c := PrefixCounts(hist)
	curve := p.Curve()
	for i := 1; i <= 4; i++ {
		want := float64(c[i-1]+rel.PrefixNoise(i)) / 10
		if p.value(i) != want || curve[i-1] != want {
			t.Errorf("F̂(τ_%d) = %v (curve %v), want (c_i + η(i))/n = %v", i, p.value(i), curve[i-1], want)
		}
	}
	if p.Normaliser().N != 10 || p.Bins() != 4 || p.Mechanism() != m {
		t.Errorf("n, Bins = %d, %d", p.Normaliser().N, p.Bins())
	}
	if want := math.Sqrt(4) / 10; p.MeanStdDev() != want {
		t.Errorf("MeanStdDev = %v, want %v", p.MeanStdDev(), want)
	}
	// The same seed gives the same release; another seed another one.
	q, _ := NewPrivate(m, hist, seedOf(1))
	r, _ := NewPrivate(m, hist, seedOf(2))
	if !slices.Equal(q.Curve(), curve) {
		t.Error("equal seeds gave different releases")
	}
	if slices.Equal(r.Curve(), curve) {
		t.Error("different seeds gave equal releases")
	}
}

func TestPrivateAddRemoveNormalisesByNoisyTotal(t *testing.T) {
	hist := []int64{40, 60}
	m := uniformMechanism{bins: 2, a: 5, relation: mechanism.AddRemove}
	p, err := NewPrivate(m, hist, seedOf(3))
	if err != nil {
		t.Fatal(err)
	}
	if p.Normaliser().N != p.count(2) {
		t.Errorf("n = %d, want the noisy count ĉ_N = %d", p.Normaliser().N, p.count(2))
	}
	if p.value(2) != 1 {
		t.Errorf("F̂(τ_N) = %v, want 1", p.value(2))
	}
	if nz := p.Normaliser(); nz.Public || nz.N != p.count(2) || nz.Note != "" {
		t.Errorf("normaliser %+v, want the private noisy total %d without a note", nz, p.count(2))
	}
	// A noisy total that is not positive is raised to 1, with a note, not
	// divided by.
	q, err := NewPrivate(uniformMechanism{bins: 1, a: 1000, relation: mechanism.AddRemove}, []int64{0}, findSeed(t, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if nz := q.Normaliser(); nz.N != 1 || nz.Public || !strings.Contains(nz.Note, "raised to 1") || q.value(1) != float64(q.count(1)) {
		t.Errorf("non-positive noisy total %d: normaliser %+v, F̂ = %v", q.count(1), nz, q.value(1))
	}
}

// findSeed returns a seed whose uniform noise at prefix 1 is ≤ 0.
func findSeed(t *testing.T, a int64) noise.Seed {
	for b := range 256 {
		if (uniformRelease{seed: seedOf(byte(b)), a: a}).PrefixNoise(1) <= 0 {
			return seedOf(byte(b))
		}
	}
	t.Fatal("no seed with non-positive noise among 256")
	return noise.Seed{}
}

func TestNewPrivateRejects(t *testing.T) {
	m := uniformMechanism{bins: 3, a: 1}
	cases := []struct {
		hist []int64
		want string
	}{
		{[]int64{1, 2}, "2 bins but mechanism uniform(a=1) is set up for 3"},
		{[]int64{1, -2, 3}, "bin 2 has a negative count"},
		{[]int64{0, 0, 0}, "no instances"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if _, err := NewPrivate(m, c.hist, seedOf(0)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewPrivate(%v): error %v, want %q", c.hist, err, c.want)
			}
		})
	}
}

// TestPrivateErrorMatchesVariance checks over many releases that
// F̂(τ_i) − F(τ_i) has mean 0 and variance Var(η(i))/n², within 5 standard
// errors: a wrong normalisation (e.g. by N instead of n) or noise applied
// twice would be caught.
func TestPrivateErrorMatchesVariance(t *testing.T) {
	hist := []int64{7, 1, 0, 12, 5}
	exact := ECDF(hist)
	m := uniformMechanism{bins: 5, a: 4}
	const releases = 4000
	var sum, sumSq [5]float64
	for r := range releases {
		var seed noise.Seed
		seed[0], seed[1] = byte(r), byte(r>>8)
		p, err := NewPrivate(m, hist, seed)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			d := p.value(i+1) - exact[i]
			sum[i] += d
			sumSq[i] += d * d
		}
	}
	n := float64(PrefixCounts(hist)[4])
	for i := range 5 {
		sigma2 := m.PrefixVariance(i+1) / (n * n)
		mean := sum[i] / releases
		if se := math.Sqrt(sigma2 / releases); math.Abs(mean) > 5*se {
			t.Errorf("prefix %d: mean error %v, more than 5 standard errors (%v) from 0", i+1, mean, se)
		}
		variance := sumSq[i]/releases - mean*mean
		// Var of a sample variance ≈ 2σ⁴/R (less for uniform noise).
		if se := sigma2 * math.Sqrt(2.0/releases); math.Abs(variance-sigma2) > 5*se {
			t.Errorf("prefix %d: error variance %v, want %v ± 5·%v", i+1, variance, sigma2, se)
		}
	}
}

// TestNewNormaliser: n is the public count under replace-one and the
// noisy total under add/remove, where the count must not be used; a
// noisy total below 1 is raised to 1 with a note, and the text says
// which it is.
func TestNewNormaliser(t *testing.T) {
	for _, c := range []struct {
		name       string
		relation   mechanism.Relation
		n, noisy   int64
		want       Normaliser
		wantErr    bool
		wantString string
	}{
		{"replace-one: n", mechanism.ReplaceOne, 10000, 9987, Normaliser{N: 10000, Public: true}, false, "n = 10000 (public under replace neighbours)"},
		{"replace-one: empty", mechanism.ReplaceOne, 0, 5, Normaliser{}, true, ""},
		{"add/remove: noisy total, n ignored", mechanism.AddRemove, 10000, 9987, Normaliser{N: 9987}, false, "n ≈ 9987 (noisy total; n is private under addremove neighbours)"},
		{"add/remove: no n needed", mechanism.AddRemove, 0, 1, Normaliser{N: 1}, false, "n ≈ 1 (noisy total"},
		{"add/remove: zero raised", mechanism.AddRemove, 0, 0, Normaliser{N: 1}, false, "the noisy total 0 is below one instance and was raised to 1"},
		{"add/remove: negative raised", mechanism.AddRemove, 0, -7, Normaliser{N: 1}, false, "the noisy total -7 is below"},
		{"unknown relation", mechanism.Relation(9), 5, 5, Normaliser{}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := NewNormaliser(c.relation, c.n, c.noisy)
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if got.N != c.want.N || got.Public != c.want.Public || (got.Note != "") != (c.noisy < 1 && !c.want.Public) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if !strings.Contains(got.String(), c.wantString) {
				t.Errorf("String() = %q, want it to contain %q", got.String(), c.wantString)
			}
		})
	}
}
