package mechanism

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestNewNames(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Name: "tree", Bins: 100, Epsilon: 1}, "tree"},
		{Params{Name: "kary", Bins: 100, Epsilon: 1, K: 5}, "kary(k=5)"},
		{Params{Name: "cascade", Bins: 100, Epsilon: 1, Delta: 1e-6}, "cascade"},
		{Params{Name: "gaussian-tree", Bins: 100, Epsilon: 1, Delta: 1e-6}, "gaussian-tree"},
	} {
		t.Run(c.want, func(t *testing.T) {
			m, err := New(c.p)
			if err != nil || m.Name() != c.want || m.Bins() != 100 || m.Epsilon() != 1 {
				t.Errorf("New(%+v) = %v, %v; want %s", c.p, m, err, c.want)
			}
		})
	}
	_, err := New(Params{Name: "laplace", Bins: 10, Epsilon: 1})
	if !errors.Is(err, ErrUnknownMechanism) || !errors.Is(err, ErrInvalidParams) || !strings.HasPrefix(err.Error(), "mechanism: ") ||
		!strings.Contains(err.Error(), `"laplace"`) || !strings.Contains(err.Error(), strings.Join(Names, ", ")) {
		t.Errorf("unknown name: error %v, want one naming it and listing %v", err, Names)
	}
	if _, err := New(Params{Name: "auto", Bins: 0, Epsilon: 1}); !errors.Is(err, ErrInvalidParams) || errors.Is(err, ErrUnknownMechanism) ||
		!strings.HasPrefix(err.Error(), "mechanism: auto: ") || !strings.Contains(err.Error(), "bins 0") {
		t.Errorf("auto with bins 0: error %v", err)
	}
}

// TestNewAuto checks that auto keeps the least mean variance among the
// pure mechanisms when δ = 0 and among all of them when δ > 0.
func TestNewAuto(t *testing.T) {
	for _, delta := range []float64{0, 1e-9} {
		for _, r := range []Relation{ReplaceOne, AddRemove} {
			p := Params{Name: "auto", Bins: 1 << 12, Epsilon: 1, Delta: delta, Relation: r}
			auto, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			if delta == 0 && auto.Delta() != 0 {
				t.Errorf("δ = 0: auto chose %s with δ = %v", auto.Name(), auto.Delta())
			}
			names := []string{"tree", "kary"}
			if delta > 0 {
				names = append(names, "cascade", "gaussian-tree")
			}
			for _, name := range names {
				q := p
				q.Name = name
				m, err := New(q)
				if err != nil {
					t.Fatal(err)
				}
				if m.MeanVariance() < auto.MeanVariance() {
					t.Errorf("δ=%v %v: %s has mean variance %v below auto's %s (%v)", delta, r, m.Name(), m.MeanVariance(), auto.Name(), auto.MeanVariance())
				}
			}
		}
	}
}

// BenchmarkNewRelease times NewRelease, which draws every node noise of
// a release (the eager drawing that keeps PrefixNoise's time independent
// of the noise), for each mechanism at N = 2^6, 2^10 and 2^15, and
// reports the time per node drawn (k-ary draws only its used nodes).
func BenchmarkNewRelease(b *testing.B) {
	for _, bins := range []int{1 << 6, 1 << 10, 1 << 15} {
		for _, p := range []Params{
			{Name: "tree", Epsilon: 1},
			{Name: "kary", Epsilon: 1},
			{Name: "cascade", Epsilon: 1, Delta: 1e-6},
			{Name: "gaussian-tree", Epsilon: 1, Delta: 1e-6},
			{Name: "tree", Epsilon: 1, Relation: AddRemove, Unit: 1 << 32},
		} {
			p.Bins = bins
			m, err := New(p)
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("%s/N=%d", m.Name(), bins)
			if p.Unit > 1 {
				name += "/unit=2^32"
			}
			drawn := m.Nodes()
			if k, ok := m.(*kary); ok {
				drawn = len(k.usedKeys())
			}
			b.Run(name, func(b *testing.B) {
				var seed [32]byte
				for b.Loop() {
					seed[0]++
					m.NewRelease(seed)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*drawn), "ns/node")
				b.ReportMetric(float64(drawn), "nodes")
			})
		}
	}
}
