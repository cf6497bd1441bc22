package client

import (
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/server"
)

// TestAssortedForgeries: for both backends the malicious parties' kinds
// cover every kind once, and the first ones every rejection reason.
func TestAssortedForgeries(t *testing.T) {
	for _, backend := range []string{string(server.Additive), string(server.DCF)} {
		t.Run(backend, func(t *testing.T) {
			kinds, err := ForgeriesOf(&manifest.Manifest{Backend: backend, Grid: manifest.Grid{Bins: 8}})
			if err != nil {
				t.Fatal(err)
			}
			got := assorted(kinds)
			names, reasons := map[string]bool{}, map[string]bool{}
			for _, k := range got {
				names[k.Name], reasons[k.Reason] = true, true
			}
			if len(got) != len(kinds) || len(names) != len(kinds) {
				t.Fatalf("assorted kinds %v of %v", got, kinds)
			}
			first := map[string]bool{}
			for _, k := range got[:len(reasons)] {
				first[k.Reason] = true
			}
			if len(first) != len(reasons) || len(reasons) < 2 {
				t.Errorf("the first %d kinds give the reasons %v, want all of %v", len(reasons), first, reasons)
			}
		})
	}
}
