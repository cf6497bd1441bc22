package audit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// TestRunCountingOnTreesCatchesControl runs the black-box audit of
// counting-on-trees: no lower bound of the honest release exceeds its
// claim (ε end to end, each step's share), and the control built at 2ε —
// every noise scale about halved — is caught on every audited step (its
// bound above half of its own share, the share it would claim had its
// noise not been halved). ε = 4 and δ = 10⁻³ make the shares large
// enough (0.2–0.6) for 20 000 trials to show a factor 2.
func TestRunCountingOnTreesCatchesControl(t *testing.T) {
	const eps = 4.0
	res, err := RunCountingOnTrees(context.Background(), Config{
		Epsilon: eps, Delta: 1e-3, Alpha: 0.5, Arity: 2, Bins: 4, Trials: 20000,
		Relation: mechanism.AddRemove, Rand: seeds(3),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "consistent" || res.Release.LowerBound > eps {
		t.Errorf("honest release: %s, end-to-end bound %v", res.Verdict, res.Release.LowerBound)
	}
	if len(res.Steps) < 3 {
		t.Fatalf("%d steps audited, want the root bound and a round's two", len(res.Steps))
	}
	for _, s := range res.Steps {
		if s.LowerBound > s.Epsilon {
			t.Errorf("%s: bound %v above its share %v", s.Name, s.LowerBound, s.Epsilon)
		}
		if !s.ControlCaught || s.ControlLowerBound <= s.ControlEpsilon/2 {
			t.Errorf("%s: control (share %v) not caught: bound %v", s.Name, s.ControlEpsilon, s.ControlLowerBound)
		}
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil || !strings.Contains(b.String(), "not checked: ") {
		t.Errorf("text output lacks what is not checked (%v):\n%s", err, b.String())
	}
}

func TestRunCountingOnTreesInvalid(t *testing.T) {
	ok := Config{Epsilon: 1, Delta: 1e-6, Alpha: 0.1, Arity: 2, Bins: 4, Trials: 1000}
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"delta", func(c *Config) { c.Delta = 0 }},
		{"alpha", func(c *Config) { c.Alpha = 1 }},
		{"arity", func(c *Config) { c.Arity = 1 }},
		{"bins", func(c *Config) { c.Bins = MaxTreeBins + 1 }},
		{"epsilon", func(c *Config) { c.Epsilon = -1 }},
		{"trials", func(c *Config) { c.Trials = 1 }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			_, err := RunCountingOnTrees(context.Background(), cfg)
			var fe *FieldError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("got %v, want a %s field error", err, tc.field)
			}
		})
	}
}
