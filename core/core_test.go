package core

import "testing"

// TestComponentKnownAnswer pins the components' wire values, names and
// scales: reports, release records and queries carry the values.
func TestComponentKnownAnswer(t *testing.T) {
	for _, tc := range []struct {
		c     Component
		value uint8
		name  string
		scale float64
	}{
		{Count, 0, "count", 1},
		{Label, 1, "label", 1},
		{NotLabel, 2, "notlabel", 1},
		{Probability, 3, "probability", 1 << 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if uint8(tc.c) != tc.value || tc.c.String() != tc.name || tc.c.Scale() != tc.scale || !tc.c.Valid() {
				t.Errorf("component %d %q scale %g valid %v, want %d %q scale %g valid", uint8(tc.c), tc.c, tc.c.Scale(), tc.c.Valid(), tc.value, tc.name, tc.scale)
			}
		})
	}
	if c := Component(4); c.Valid() || c.String() != "Component(4)" {
		t.Errorf("Component(4): valid %v, name %q", c.Valid(), c)
	}
}

func TestIDString(t *testing.T) {
	id := ID{0x01, 0xab, 15: 0xff}
	if got, want := id.String(), "01ab00000000000000000000000000ff"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if id.IsZero() || !(ID{}).IsZero() {
		t.Error("IsZero is wrong")
	}
}
