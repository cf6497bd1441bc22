package hierarchy

import (
	"errors"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// TestNewAuto checks that auto picks the least predicted α-mRMSE among
// the mechanisms the parameters allow, and that each named mechanism
// states the guarantee asked for.
func TestNewAuto(t *testing.T) {
	for _, p := range []Params{
		{Bins: 64, Arity: 2, Epsilon: 1, Alpha: 0.1},
		{Bins: 64, Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.1, Relation: mechanism.AddRemove},
		{Bins: 81, Arity: 3, Epsilon: 0.5, Delta: 1e-9, Alpha: 0.5},
	} {
		auto, err := New("auto", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range Names[1:] {
			m, err := New(name, p)
			if name == "counting-on-trees" || name == "cascade" || name == "gaussian-tree" {
				if p.Delta == 0 {
					if err == nil {
						t.Errorf("%s accepted δ = 0", name)
					}
					continue
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.PredictedMRMSE(p.Alpha) < auto.PredictedMRMSE(p.Alpha) {
				t.Errorf("%+v: auto chose %s (%v) over %s (%v)", p, auto.Name(), auto.PredictedMRMSE(p.Alpha), m.Name(), m.PredictedMRMSE(p.Alpha))
			}
			if m.Epsilon() != p.Epsilon || m.Relation() != p.Relation || m.Delta() > p.Delta || m.Tree().Arity() != p.Arity {
				t.Errorf("%s: guarantee (%v, %v, %v) on arity %d for %+v", name, m.Epsilon(), m.Delta(), m.Relation(), m.Tree().Arity(), p)
			}
		}
	}
	if _, err := New("laplace", Params{Bins: 4, Arity: 2, Epsilon: 1}); !errors.Is(err, ErrUnknownMechanism) {
		t.Errorf("unknown name: %v", err)
	}
}

// TestFromPrefixes checks that a node released from prefixes is the
// true count plus the difference of the two prefix noises, and that
// RangeVariance of a prefix is its PrefixVariance.
func TestFromPrefixes(t *testing.T) {
	m, err := mechanism.New(mechanism.Params{Name: "kary", K: 3, Bins: 27, Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := NewTree(27, 3)
	nm, err := FromPrefixes(m, tr)
	if err != nil {
		t.Fatal(err)
	}
	hist := make([]int64, 27)
	hist[4] = 10
	out, err := nm.Release(hist, [32]byte{5})
	if err != nil {
		t.Fatal(err)
	}
	rel := m.NewRelease([32]byte{5})
	if lo, hi := tr.Range(2, 1); out[2][1] != 10+rel.PrefixNoise(hi)-rel.PrefixNoise(lo) {
		t.Errorf("node (2,1) = %d", out[2][1])
	}
	for i := 1; i <= 27; i++ {
		if v := RangeVariance(m, 0, i); v != m.PrefixVariance(i) {
			t.Errorf("prefix %d: range variance %v, prefix variance %v", i, v, m.PrefixVariance(i))
		}
	}
	other, _ := NewTree(9, 3)
	if _, err := FromPrefixes(m, other); !errors.Is(err, ErrInvalid) {
		t.Errorf("mismatched bins: %v", err)
	}
}
