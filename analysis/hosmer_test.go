package analysis

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
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
			if !strings.Contains(h.Guarantee, "under replace neighbours") || !strings.Contains(h.Guarantee, name+" plan") {
				t.Errorf("guarantee %q", h.Guarantee)
			}
			// Noise-free: each bar is the binomial one, 1.96·√(m(1−m)/size).
			w := h.RateHalfWidths()
			if len(w) != len(h.Groups) {
				t.Fatalf("%d half-widths for %d groups", len(w), len(h.Groups))
			}
			for k, g := range h.Groups {
				m := g.Expected / g.Size
				if want := z975 * math.Sqrt(m*(1-m)/g.Size); math.Abs(w[k]-want) > 1e-6*want+1e-12 {
					t.Errorf("group %d: half-width %v, binomial %v", k, w[k], want)
				}
			}
		})
	}
}

// The calibration chart's bars (TestRunHosmerExact: binomial alone
// without noise) add the release's Label range variance over each
// group's bins at a finite ε.
func TestObservedSDAddsNoise(t *testing.T) {
	u, _ := newCurator(t, 64)
	plan, err := HosmerPlan("joint", 1, 16, mechanism.Params{Name: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	rels, err := plan.Create(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	groups := []hosmer.Group{{First: 1, Last: 4, Size: 20, Positives: 5, Expected: 4}, {First: 5, Last: 16, Size: 44, Positives: 30, Expected: 33}}
	sd := observedSD(rels, groups)
	for k, g := range groups {
		m := g.Expected / g.Size
		noise := rels[0].RangeVariance(core.Label, g.First-1, g.Last)
		if want := math.Sqrt(noise + g.Size*m*(1-m)); noise <= 0 || math.Abs(sd[k]-want) > 1e-9*want {
			t.Errorf("group %d: s.d. %v, want √(noise %v + binomial %v)", k, sd[k], noise, g.Size*m*(1-m))
		}
	}
}

// WriteGroups prints a released rate and its 95 % interval clipped to
// [0, 1] (a noisy O_1 can be negative or exceed the group's size), never
// "0.0000 ± 8.8739".
func TestWriteGroupsClipsRates(t *testing.T) {
	h := &Hosmer{
		Groups: []hosmer.Group{
			{First: 1, Last: 4, Size: 4, Positives: -0.5, Expected: 0.2},
			{First: 5, Last: 8, Size: 100, Positives: 50, Expected: 48},
			{First: 9, Last: 9, Size: 10, Positives: 12, Expected: 9},
		},
		ObservedSD: []float64{18.1, 5, 1},
	}
	var b strings.Builder
	if err := h.WriteGroups(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"obs. rate [95 % interval]", "0.0000 [0.0000, 1.0000]", "0.5000 [0.4020, 0.5980]", "1.0000 [1.0000, 1.0000]"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "±") {
		t.Errorf("table has an unclipped rate:\n%s", out)
	}
}
