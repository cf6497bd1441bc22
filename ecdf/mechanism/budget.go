package mechanism

import (
	"fmt"
	"math"
)

// Budget is an amount of privacy loss (ε, δ): what a release costs, and
// what a dataset may spend in all. Under basic composition the losses
// of releases add ([Budget.Add]).
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// Add returns b + c, ε and δ each.
func (b Budget) Add(c Budget) Budget { return Budget{b.Epsilon + c.Epsilon, b.Delta + c.Delta} }

// Valid returns nil if b is a budget: ε non-negative and finite, δ in
// [0, 1).
func (b Budget) Valid() error {
	if math.IsNaN(b.Epsilon) || math.IsInf(b.Epsilon, 0) || b.Epsilon < 0 {
		return fmt.Errorf("mechanism: budget ε=%v is not a non-negative finite number", b.Epsilon)
	}
	if !(b.Delta >= 0 && b.Delta < 1) {
		return fmt.Errorf("mechanism: budget δ=%v is not in [0, 1)", b.Delta)
	}
	return nil
}
