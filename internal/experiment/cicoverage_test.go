package experiment

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
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
	if last := figs[0].Series[len(figs[0].Series)-1]; !strings.Contains(last.Name, "type-I") {
		t.Errorf("last series %q: want the Hosmer–Lemeshow type-I error", last.Name)
	}
	for _, s := range figs[0].Series {
		if len(s.Y) != 1 || s.Y[0] < 0 || s.Y[0] > 1 || len(s.StdErr) != 1 {
			t.Errorf("series %q: %v ± %v", s.Name, s.Y, s.StdErr)
		}
	}
}

// calibratedInstance's p is P(y = 1 | p): in each tenth of the p range
// the labels' sum is within 4 binomial s.d. of Σp (a wrong intercept,
// e.g. without the −ciShift²/2, misses by far more at 2·10⁵ draws).
func TestCalibratedInstance(t *testing.T) {
	for _, prev := range []float64{0.05, 0.3} {
		draw := calibratedInstance(prev)
		rng := rand.New(rand.NewPCG(1, 25))
		var sumY, sumP, varP [10]float64
		for range 200000 {
			p, y := draw(rng)
			g := min(int(p*10), 9)
			sumY[g] += float64(y)
			sumP[g] += p
			varP[g] += p * (1 - p)
		}
		for g := range sumY {
			if d := math.Abs(sumY[g] - sumP[g]); d > 4*math.Sqrt(varP[g])+1e-9 {
				t.Errorf("prevalence %g, p in [%.1f, %.1f): Σy = %.0f, Σp = %.1f (s.d. %.1f)", prev, float64(g)/10, float64(g+1)/10, sumY[g], sumP[g], math.Sqrt(varP[g]))
			}
		}
	}
}

// The Hosmer–Lemeshow cell of the grid: on calibrated data the
// noise-aware test (grid plan) rejects at most 0.05 + 3 s.e. of
// hlCellRuns data sets, with the cell's relation and servers, so that
// the release's stated noise law (twoServers.servers) is the one drawn.
// The servers' noise comes from crypto/rand, so the count varies from
// run to run: by the binomial law, a true level 0.05 fails a cell
// (65 or more of 900) with probability 0.23 %, and a true 0.10 — a
// factor-2 mistake — passes it with probability 0.16 %.
func TestCIHosmerTypeI(t *testing.T) {
	if testing.Short() {
		t.Skip("rejection rate over 900 data sets per cell")
	}
	const hlCellRuns, n, eps, draws = 900, 500, 1.0, 39
	hg, err := ecdf.NewLinearGrid(0, 1, hlBins)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []ciCell{{n: n, prevalence: 0.3, relation: mechanism.ReplaceOne, servers: 2}, {n: n, prevalence: 0.3, relation: mechanism.AddRemove, servers: 1}} {
		t.Run(c.id(), func(t *testing.T) {
			pl, err := analysis.HosmerPlan("grid", eps, hlBins, mechanism.Params{Name: hlMechanism, Relation: c.relation})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(c.servers), 25))
			var rejected int
			for run := range hlCellRuns {
				rej, err := hlRun(context.Background(), rng, hg, c.n, draws, calibratedInstance(c.prevalence), []*hosmer.Plan{pl}, uint64(run), c.servers)
				if err != nil {
					t.Fatal(err)
				}
				if rej[0][0] {
					rejected++
				}
			}
			rate, se := float64(rejected)/hlCellRuns, math.Sqrt(0.05*0.95/hlCellRuns)
			t.Logf("%s: rejected %d of %d", c.id(), rejected, hlCellRuns)
			if rate > 0.05+3*se {
				t.Errorf("type-I error %.3f, want ≤ %.3f", rate, 0.05+3*se)
			}
		})
	}
}

// BenchmarkCICoverageCell is one data set of a cell of the coverage
// grid per iteration (ns/op is a data set's cost).
func BenchmarkCICoverageCell(b *testing.B) {
	for _, cells := range []string{"n=300 eps=1 prev=0.3 rel=replace servers=1", "n=100000 eps=1 prev=0.3 rel=replace servers=2"} {
		b.Run(strings.Fields(cells)[0], func(b *testing.B) {
			if _, err := CICoverage(context.Background(), Config{Runs: b.N, Cells: cells}); err != nil {
				b.Fatal(err)
			}
		})
	}
}
