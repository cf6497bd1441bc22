package mechanism

import (
	"math"
	"testing"
)

func TestBudget(t *testing.T) {
	if got := (Budget{0.5, 1e-6}).Add(Budget{0.25, 1e-6}); got != (Budget{0.75, 2e-6}) {
		t.Errorf("Add = %+v, want {0.75 2e-06}", got)
	}
	for _, tt := range []struct {
		b    Budget
		want bool
	}{
		{Budget{}, true},
		{Budget{1, 0.5}, true},
		{Budget{-1, 0}, false},
		{Budget{math.Inf(1), 0}, false},
		{Budget{math.NaN(), 0}, false},
		{Budget{1, 1}, false},
		{Budget{1, -1e-9}, false},
		{Budget{1, math.NaN()}, false},
	} {
		if err := tt.b.Valid(); (err == nil) != tt.want {
			t.Errorf("%+v.Valid() = %v, want valid %v", tt.b, err, tt.want)
		}
	}
}
