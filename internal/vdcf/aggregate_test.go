package vdcf

import (
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestAggregateSumsMatchFieldAdditions checks the lazily reduced sums
// against canonical field additions, on every path (accelerations on and
// off), on vectors whose elements are near p (every addition wraps) and
// on random ones, for both schemes, on grids that leave tails after the
// vector kernel's groups of 8.
func TestAggregateSumsMatchFieldAdditions(t *testing.T) {
	const reports = 50
	for _, accel := range accelPaths(t) {
		for _, bins := range []int{8, 13, 1027} {
			for _, tc := range []struct {
				name string
				f    *fixture
				comp []payload.Component
				elem func(f *fixture) fss.Fp
			}{
				{"near p", newFixture(t, bins, 20), []payload.Component{payload.Count, payload.Label}, func(f *fixture) fss.Fp { return fss.Fp(fss.Modulus - 1 - f.r.Uint64N(4)) }},
				{"random", newFixture(t, bins, 21), []payload.Component{payload.Count, payload.Label}, func(f *fixture) fss.Fp { return fss.Fp(f.r.Uint64N(fss.Modulus)) }},
				{"label and MAC", newFixture(t, bins, 22), []payload.Component{payload.Label, MAC}, func(f *fixture) fss.Fp { return fss.Fp(f.r.Uint64N(fss.Modulus)) }},
				{"probability", newProbFixture(t, bins, 23), []payload.Component{payload.Count, payload.Label, Probability}, func(f *fixture) fss.Fp { return fss.Fp(fss.Modulus - 1 - f.r.Uint64N(4)) }},
			} {
				t.Run(fmt.Sprintf("%s/bins=%d/%s", accel.name, bins, tc.name), func(t *testing.T) {
					accel.set(t)
					aggregateMatches(t, tc.f, tc.comp, tc.elem, reports)
				})
			}
		}
	}
}

// aggregateMatches adds reports random vectors to an aggregate over comp
// and compares its sums with canonical field additions.
func aggregateMatches(t *testing.T, f *fixture, comp []payload.Component, elem func(*fixture) fss.Fp, reports int) {
	t.Helper()
	agg, err := f.s.NewAggregate(comp)
	if err != nil {
		t.Fatal(err)
	}
	bins, m := f.s.Bins(), f.s.Components()
	want := make([]fss.Fp, bins*m)
	for range reports {
		vec := make([]fss.Fp, bins*m)
		for i := range vec {
			vec[i] = elem(f)
			want[i] = want[i].Add(vec[i])
		}
		addVector(f.s, comp, agg, vec)
	}
	for k, c := range comp {
		for j := range bins {
			if got := agg.Sum(k, j); got != want[j*m+int(c)] {
				t.Fatalf("component %v at prefix %d: sum %d, want %d", c, j, got, want[j*m+int(c)])
			}
		}
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

// TestSummedComponents: a server sums the count and label, and the
// probability when the reports carry it (server/schemes.go and `bench
// fss --verify` fold these), each an aggregate can take.
func TestSummedComponents(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func(int) (*Scheme, error)
		want []payload.Component
	}{
		{"count and label", New, []payload.Component{payload.Count, payload.Label}},
		{"with probability", NewWithProbability, []payload.Component{payload.Count, payload.Label, payload.Probability}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.new(16)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Summed(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("Summed() = %v, want %v", got, tc.want)
			}
			if _, err := s.NewAggregate(s.Summed()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
