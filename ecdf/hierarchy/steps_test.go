package hierarchy

import (
	"errors"
	"math"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// TestSteps checks the steps an auditor runs: the root bound, then one
// truncated Laplace step and one sparse vector per round of the
// schedule; ControlSteps keeps the names and thresholds, doubles every ε
// share and halves the noise (the spread of a truncated Laplace step's
// draws falls by about 2: its scale is at least 1/ε′, so its standard
// deviation halves up to the truncation, well within the 1.6–2.4 band
// over 4 000 draws); Steps refuses a non-positive root bound.
func TestSteps(t *testing.T) {
	c, err := NewCountingOnTrees(Params{Bins: 16, Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.5, Relation: mechanism.AddRemove})
	if err != nil {
		t.Fatal(err)
	}
	honest, err := c.Steps(5000)
	if err != nil {
		t.Fatal(err)
	}
	control, err := c.ControlSteps(5000)
	if err != nil {
		t.Fatal(err)
	}
	rounds, _ := schedule(c.p, c.tree.Depth(), 5000, c.kappa, c.space)
	if len(honest) != 1+2*len(rounds) || len(control) != len(honest) {
		t.Fatalf("%d and %d steps for %d rounds", len(honest), len(control), len(rounds))
	}
	spread := func(s Step) float64 {
		sum, sq := 0.0, 0.0
		const n = 4000
		for i := range n {
			v := float64(s.Draw([]int64{0}, noise.Seed{byte(i), byte(i >> 8)}.Stream(1, 0)))
			sum, sq = sum+v, sq+v*v
		}
		return math.Sqrt(sq/n - (sum/n)*(sum/n))
	}
	for i, h := range honest {
		k := control[i]
		if k.Name != h.Name || k.Threshold != h.Threshold || math.Abs(k.Epsilon-2*h.Epsilon) > 1e-12 || k.Delta != h.Delta {
			t.Errorf("step %d: control %+v against %+v", i, k, h)
		}
		if h.Queries == 1 && i > 0 {
			if r := spread(h) / spread(k); r < 1.6 || r > 2.4 {
				t.Errorf("%s: control spread ratio %v, want about 2", h.Name, r)
			}
		}
	}
	if _, err := c.Steps(0); !errors.Is(err, ErrInvalid) {
		t.Errorf("Steps(0): %v", err)
	}
}
