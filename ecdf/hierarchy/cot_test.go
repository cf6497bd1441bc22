package hierarchy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// katSeed is the release seed of the known-answer test, the one of
// package mechanism's.
var katSeed = noise.Seed(sha256.Sum256([]byte("fedecdf known-answer seed")))

// katHist is the data of the known-answer test: 37 bins.
func katHist() []int64 {
	h := make([]int64, 37)
	for i := range h {
		h[i] = int64((i*i*7+3*i)%23) * 97
	}
	return h
}

// TestCountingOnTreesKnownAnswers pins seed + data → released node
// counts (SHA-256 of the counts level by level, 8 little-endian bytes
// each), like TestMechanismKnownAnswers in package mechanism: a change
// is a versioned, breaking change of the release (bump cotVersion),
// never a reason to update the constants alone.
func TestCountingOnTreesKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Params
		want string
	}{
		{"b=2/addremove", Params{Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.5, Relation: mechanism.AddRemove}, "7c3cbc3422f5a8c56fc5707c05414586502e6d9d60d52b0258fe05487d0a0046"},
		{"b=2/replace", Params{Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.1}, "9c496ee2839882f545f2ad0512db72399217624a6b98dff7168130ad095f328c"},
		{"b=4/addremove", Params{Arity: 4, Epsilon: 2, Delta: 1e-9, Alpha: 0.5, Relation: mechanism.AddRemove}, "1cdc98a7c8e9a2a660bb0cfdafef20655d197efb86af7d81d60e26daa4d91ed6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.p.Bins = 37
			m, err := NewCountingOnTrees(c.p)
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.Release(katHist(), katSeed)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			for _, row := range out {
				for _, v := range row {
					h.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
				}
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != c.want {
				t.Errorf("%s: transcript %s, want %s: the seed → release derivation changed (a versioned, breaking change)", m.Name(), got, c.want)
			}
		})
	}
}

// TestCountingOnTreesRelease checks the release's contract: equal seeds
// give equal counts, every count lies in the classification interval of
// its round (so never negative, and 0 for an empty data set), and the
// nodes found above the last threshold include every node far above it.
func TestCountingOnTreesRelease(t *testing.T) {
	p := Params{Bins: 256, Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.5, Relation: mechanism.AddRemove}
	m, err := NewCountingOnTrees(p)
	if err != nil {
		t.Fatal(err)
	}
	hist := make([]int64, 256)
	for i := range hist {
		hist[i] = int64(i % 3 * 50)
	}
	hist[7] = 20000
	counts, _ := m.Tree().Counts(hist)
	a, err := m.Release(hist, noise.Seed{9})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Release(hist, noise.Seed{9})
	sch, _ := schedule(p, m.Tree().Depth(), counts[0][0], m.kappa, m.space)
	floor := sch[len(sch)-1].high
	for l := range a {
		for j := range a[l] {
			if a[l][j] != b[l][j] || a[l][j] < 0 {
				t.Fatalf("level %d node %d: %d then %d", l, j, a[l][j], b[l][j])
			}
			if w := counts[l][j]; w > 4*floor && MultiplicativeError(p.Alpha, float64(w), float64(a[l][j])) > float64(floor) {
				t.Errorf("level %d node %d: count %d released as %d (floor %d)", l, j, w, a[l][j], floor)
			}
		}
	}
	zero, err := m.Release(make([]int64, 256), noise.Seed{3})
	if err != nil {
		t.Fatal(err)
	}
	for l := range zero {
		for j, v := range zero[l] {
			if v != 0 && v > sch[0].high {
				t.Errorf("empty data: level %d node %d released as %d", l, j, v)
			}
		}
	}
}

// TestCountingOnTreesErrors checks that bad parameters and data are
// refused with ErrInvalid.
func TestCountingOnTreesErrors(t *testing.T) {
	good := Params{Bins: 8, Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.1}
	for name, mut := range map[string]func(*Params){
		"arity":    func(p *Params) { p.Arity = 1 },
		"epsilon":  func(p *Params) { p.Epsilon = 0 },
		"delta 0":  func(p *Params) { p.Delta = 0 },
		"delta 1":  func(p *Params) { p.Delta = 1 },
		"alpha 0":  func(p *Params) { p.Alpha = 0 },
		"alpha 1":  func(p *Params) { p.Alpha = 1 },
		"relation": func(p *Params) { p.Relation = 7 },
	} {
		p := good
		mut(&p)
		if _, err := NewCountingOnTrees(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	m, _ := NewCountingOnTrees(good)
	if _, err := m.Release([]int64{1, 2}, noise.Seed{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("short histogram: %v", err)
	}
}
