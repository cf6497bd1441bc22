package analysis

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

func TestHosmerPlan(t *testing.T) {
	for _, c := range []struct {
		name, want string
		delta      float64
		refusal    string
	}{
		{"", "grid", 0, ""},
		{"grid", "grid", 0, ""},
		{"joint", "joint", 0, ""},
		{"paper", "paper", 1e-6, ""},
		{"joint", "", 1e-6, "use the grid or paper plan"},
		{"wishful", "", 0, `plan "wishful" is unknown`},
	} {
		t.Run(c.name+c.refusal, func(t *testing.T) {
			p, err := HosmerPlan(c.name, 1, 16, mechanism.Params{Name: "tree", Delta: c.delta})
			if c.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), c.refusal) {
					t.Fatalf("error %v, want one containing %q", err, c.refusal)
				}
				return
			}
			if err != nil || p.Name != c.want || p.Epsilon != 1 {
				t.Fatalf("plan %+v, %v; want %s at ε = 1", p, err, c.want)
			}
		})
	}
}

func TestHosmerConfigDefaults(t *testing.T) {
	if c := HosmerConfig(16, 100, 0); c.Groups != HosmerGroups || c.MinExpected != 1 || c.Bins != 16 || c.Reports != 100 {
		t.Errorf("HosmerConfig(16, 100, 0) = %+v", c)
	}
	if c := HosmerConfig(16, 100, 4); c.Groups != 4 {
		t.Errorf("HosmerConfig(16, 100, 4) has %d groups", c.Groups)
	}
}

// At ε = 2^48 every plan's private test through the curator is the exact
// one, and states its cost and guarantee.
func TestRunHosmerExact(t *testing.T) {
	u, g := newCurator(t, 64)
	bins, labels, probs := make([]int, 64), make([]int, 64), make([]float64, 64)
	for k := range bins {
		bins[k], _ = g.Bin(float64(k) / 64)
		labels[k], probs[k] = k%2, float64(k)/64
	}
	truth, err := TrueHosmer(bins, labels, probs, 16, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"joint", "paper"} {
		t.Run(name, func(t *testing.T) {
			plan, err := HosmerPlan(name, 1<<48, 16, mechanism.Params{Name: "tree"})
			if err != nil {
				t.Fatal(err)
			}
			rels, err := plan.Create(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			h, err := RunHosmer(context.Background(), u, plan, rels, g, "l2", HosmerConfig(16, 64, 4), Bootstrap{Draws: 9})
			if err != nil {
				t.Fatal(err)
			}
			if h.Error != "" || math.Abs(h.H-truth.H) > 1e-6 || len(h.ReleaseSpecs) != len(rels) || h.Epsilon != 1<<48 {
				t.Errorf("H = %v (%s), true %v; %d release specs for %d releases; ε %v", h.H, h.Error, truth.H, len(h.ReleaseSpecs), len(rels), h.Epsilon)
			}
			if !strings.Contains(h.Guarantee, "replace-one") || !strings.Contains(h.Guarantee, name+" plan") {
				t.Errorf("guarantee %q", h.Guarantee)
			}
		})
	}
}
