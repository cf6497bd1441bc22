package experiment

import (
	"context"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

func TestCICells(t *testing.T) {
	for _, tc := range []struct {
		name, cells string
		want        int // cells
		eps         int // ε values
		err         string
	}{
		{"issue 15 default", "", 2, 3, ""},
		{"whole grid", "n=50", 1 * 2 * 2 * 2, 4, ""},
		{"one cell", "n=100 eps=1 prev=0.3 rel=replace servers=2", 1, 1, ""},
		{"two n, curator", "n=100,300 servers=1 rel=addremove prev=0.05", 2, 4, ""},
		{"unknown key", "size=100", 0, 0, "unknown key"},
		{"bad value", "n=ten", 0, 0, "n=ten"},
		{"bad relation", "rel=swap", 0, 0, "rel=swap"},
		{"no equals", "n", 0, 0, "key=v1,v2"},
		{"bad prevalence", "prev=1", 0, 0, "prevalence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Cells: tc.cells}.withDefaults()
			cells, eps, err := ciCells(cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cells) != tc.want || len(eps) != tc.eps {
				t.Errorf("%d cells × %d ε, want %d × %d", len(cells), len(eps), tc.want, tc.eps)
			}
		})
	}
}

// A two-run cell at n = 50 under add/remove with a curator: one figure
// named by the cell, every target's coverage in [0, 1] with its s.e.
func TestCICoverageCell(t *testing.T) {
	figs, err := CICoverage(context.Background(), Config{Runs: 2, Cells: "n=50 eps=1 prev=0.3 rel=addremove servers=1"})
	if err != nil {
		t.Fatal(err)
	}
	c := ciCell{n: 50, prevalence: 0.3, relation: mechanism.AddRemove, servers: 1}
	if len(figs) != 1 || figs[0].ID != c.id() || figs[0].ID != "ci-coverage-n50-p0.3-addremove-s1" {
		t.Fatalf("figures %v, want one %s", figs, c.id())
	}
	for _, s := range figs[0].Series {
		if len(s.Y) != 1 || s.Y[0] < 0 || s.Y[0] > 1 || len(s.StdErr) != 1 {
			t.Errorf("series %q: %v ± %v", s.Name, s.Y, s.StdErr)
		}
	}
}
