package vdcf

import (
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestAggregateSumsMatchFieldAdditions checks the lazily reduced sums
// against canonical field additions, on vectors whose elements are near p
// (every addition wraps) and on random ones, for both schemes.
func TestAggregateSumsMatchFieldAdditions(t *testing.T) {
	const bins, reports = 8, 50
	for _, tc := range []struct {
		name string
		f    *fixture
		comp []payload.Component
		elem func(f *fixture) fss.Fp
	}{
		{"near p", newFixture(t, bins, 20), []payload.Component{payload.Count, payload.Label}, func(f *fixture) fss.Fp { return fss.Fp(fss.Modulus - 1 - f.r.Uint64N(4)) }},
		{"random", newFixture(t, bins, 21), []payload.Component{payload.Label, MAC}, func(f *fixture) fss.Fp { return fss.Fp(f.r.Uint64N(fss.Modulus)) }},
		{"probability", newProbFixture(t, bins, 22), []payload.Component{payload.Count, payload.Label, Probability}, func(f *fixture) fss.Fp { return fss.Fp(f.r.Uint64N(fss.Modulus)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg, err := tc.f.s.NewAggregate(tc.comp)
			if err != nil {
				t.Fatal(err)
			}
			m := tc.f.s.Components()
			want := make([]fss.Fp, bins*m)
			for range reports {
				vec := make([]fss.Fp, bins*m)
				for i := range vec {
					vec[i] = tc.elem(tc.f)
					want[i] = want[i].Add(vec[i])
				}
				agg.Add(vec)
			}
			for k, c := range tc.comp {
				for j := range bins {
					if got := agg.Sum(k, j); got != want[j*m+int(c)] {
						t.Fatalf("component %v at prefix %d: sum %d, want %d", c, j, got, want[j*m+int(c)])
					}
				}
			}
		})
	}
}

// TestAggregateRefusesAMissingComponent: the probability is not carried
// by a scheme made with New.
func TestAggregateRefusesAMissingComponent(t *testing.T) {
	s, err := New(4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewAggregate([]payload.Component{payload.Count, Probability}); err == nil {
		t.Fatal("an aggregate over the probability of reports without it was made")
	}
}
