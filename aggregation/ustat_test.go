package aggregation

import (
	"slices"

	"github.com/fedecdf/fedecdf/core"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
)

func TestReleaseSpecNormalize(t *testing.T) {
	cases := []struct {
		name  string
		comps []core.Component
		want  []core.Component // nil: refused
	}{
		{"empty means count", nil, []core.Component{core.Count}},
		{"sorted", []core.Component{core.NotLabel, core.Label}, []core.Component{core.Label, core.NotLabel}},
		{"duplicate", []core.Component{core.Label, core.Label}, nil},
		{"unknown", []core.Component{core.Component(9)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReleaseSpec{Components: c.comps}.Normalize()
			switch {
			case c.want == nil && err == nil:
				t.Errorf("accepted %v", got.Components)
			case c.want != nil && (err != nil || !slices.Equal(got.Components, c.want) || got.Mechanism.Name != "tree"):
				t.Errorf("got %v, %q, %v; want %v, tree", got.Components, got.Mechanism.Name, err, c.want)
			}
		})
	}
}

// TestNewReleaseHidesReportsUnderAddRemove: n is public under
// replace-one only.
func TestNewReleaseHidesReportsUnderAddRemove(t *testing.T) {
	for _, c := range []struct {
		relation mechanism.Relation
		want     int
	}{{mechanism.ReplaceOne, 20}, {mechanism.AddRemove, 0}} {
		t.Run(c.relation.String(), func(t *testing.T) {
			spec := ReleaseSpec{Mechanism: mechanism.Params{Bins: 8, Epsilon: 1, Relation: c.relation}}
			r, err := NewRelease(payload.ReleaseID{1}, spec, 20, 2)
			if err != nil {
				t.Fatal(err)
			}
			if r.Reports != c.want || r.Mechanism(core.Count) == nil || r.Mechanism(core.Label) != nil {
				t.Errorf("reports %d (want %d), mechanisms count %v, label %v", r.Reports, c.want, r.Mechanism(core.Count), r.Mechanism(core.Label))
			}
		})
	}
}

func TestQueryCheck(t *testing.T) {
	rel, err := NewRelease(payload.ReleaseID{1}, ReleaseSpec{Mechanism: mechanism.Params{Bins: 8, Epsilon: 1}}, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		q    Query
		ok   bool
	}{
		{"valid", Query{Release: rel, Component: core.Count, Prefixes: []int{1, 8}}, true},
		{"no release", Query{Component: core.Count, Prefixes: []int{1}}, false},
		{"uncovered component", Query{Release: rel, Component: core.Label, Prefixes: []int{1}}, false},
		{"no prefixes", Query{Release: rel, Component: core.Count}, false},
		{"prefix beyond N", Query{Release: rel, Component: core.Count, Prefixes: []int{9}}, false},
		{"prefix 0", Query{Release: rel, Component: core.Count, Prefixes: []int{0}}, false},
		{"not increasing", Query{Release: rel, Component: core.Count, Prefixes: []int{2, 2}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.q.Check(); (err == nil) != c.ok {
				t.Errorf("Check() = %v, want ok %v", err, c.ok)
			}
		})
	}
}
