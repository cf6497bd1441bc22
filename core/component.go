package core

import "fmt"

// Component names one entry of a party's payload vector.
type Component uint8

// The components of a payload vector.
const (
	// Count is 1 for every instance: its prefix sums are ECDF counts.
	Count Component = iota
	// Label is the instance's label y ∈ {0, 1}.
	Label
	// NotLabel is 1 − y.
	NotLabel
	// Probability is the predicted probability p ∈ [0, 1] in fixed point,
	// round(p·2^32).
	Probability
)

// numComponents is the length of every payload vector.
const numComponents = 4

// probabilityScale is the fixed-point scale 2^32 of Probability.
const probabilityScale = 1 << 32

var componentNames = [numComponents]string{"count", "label", "notlabel", "probability"}

// String returns the component's command-line name.
func (c Component) String() string {
	if c.Valid() {
		return componentNames[c]
	}
	return fmt.Sprintf("Component(%d)", uint8(c))
}

// Valid reports whether c is one of the four components.
func (c Component) Valid() bool { return c < numComponents }

// Scale is the number of integer units per unit of the component: 1 for
// the counts, 2^32 for Probability.
func (c Component) Scale() float64 {
	if c == Probability {
		return probabilityScale
	}
	return 1
}
