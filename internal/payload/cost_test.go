package payload

import (
	"fmt"
	"testing"
)

func TestPrivacyUnits(t *testing.T) {
	cases := []struct {
		comps []Component
		want  int
	}{
		{[]Component{Count}, 1},
		{[]Component{Label}, 1},
		{[]Component{NotLabel}, 1},
		{[]Component{Label, NotLabel}, 1},
		{[]Component{NotLabel, Label}, 1},
		{[]Component{Probability}, 1},
		{[]Component{Label, Probability}, 2},
		{[]Component{Label, NotLabel, Probability}, 2},
		{[]Component{Count, Label}, 2},
		{[]Component{Count, Label, NotLabel, Probability}, 3},
		{nil, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.comps), func(t *testing.T) {
			got, err := PrivacyUnits(c.comps)
			if err != nil || got != c.want {
				t.Errorf("PrivacyUnits(%v) = %d, %v; want %d", c.comps, got, err, c.want)
			}
		})
	}
	for _, bad := range [][]Component{{Label, Label}, {Component(NumComponents)}} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			if _, err := PrivacyUnits(bad); err == nil {
				t.Errorf("PrivacyUnits(%v) accepted", bad)
			}
		})
	}
}
