package hosmer

import (
	"math"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
)

func TestBinCenters(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 4)
	if got, want := BinCenters(g), []float64{0.125, 0.375, 0.625, 0.875}; !slices.Equal(got, want) {
		t.Errorf("BinCenters = %v, want %v", got, want)
	}
}

// Without noise, the grid estimate of E_1 is exact when every
// probability is its bin's centre, so H is the textbook statistic; for
// other probabilities each group's E_1 is within half a bin width per
// instance of the exact Σp, and the sizes and O_1 are exact.
func TestGridPlanNoiseFree(t *testing.T) {
	const n, nBins = 800, 64
	g, bins, labels, probs := data(n, nBins, 5)
	centers := BinCenters(g)
	halfWidth := 0.5 / nBins
	for _, snap := range []bool{true, false} {
		p := slices.Clone(probs)
		if snap {
			for j, b := range bins {
				p[j] = centers[b-1]
			}
		}
		res, err := Private(newExactSource(bins, labels, p, nBins), Config{Bins: nBins, Reports: n, CountFromLabels: true, Centers: centers})
		if err != nil {
			t.Fatal(err)
		}
		exact, err := Exact(bins, labels, p, res.Boundaries)
		if err != nil {
			t.Fatal(err)
		}
		for k, e := range exact {
			got := res.Groups[k]
			if math.Abs(got.Size-e.Size) > 1e-9 || math.Abs(got.Positives-e.Positives) > 1e-9 || math.Abs(got.Expected-e.Expected) > e.Size*halfWidth+1e-9 {
				t.Errorf("snap %v, group %d: %+v, exact %+v (E_1 within %g)", snap, k+1, got, e, e.Size*halfWidth)
			}
		}
		if !snap {
			continue
		}
		want, err := Statistic(exact)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.H-want) > 1e-9*want {
			t.Errorf("H = %v, textbook %v", res.H, want)
		}
	}
}

func TestGridPlan(t *testing.T) {
	plan, err := GridPlan(1, 1024, mechanism.Params{Name: "cascade", Delta: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if r := plan.Releases[0]; r.Mechanism.Epsilon != 1 || len(r.Components) != 2 || !plan.CountFromLabels || !plan.ExpectedFromGrid {
		t.Errorf("grid plan %+v", plan)
	}
	if got := ledgerCharge(t, plan); got != 1 {
		t.Errorf("the ledger charges the grid plan ε = %v, want 1 (one privacy unit)", got)
	}
	if _, err := Private(newExactSource(nil, nil, nil, 8), Config{Bins: 8, Reports: 1, Centers: make([]float64, 7)}); err == nil {
		t.Error("7 centres for 8 bins accepted")
	}
}

// With CountFromLabels and a smoother, each class's prefix curve is
// smoothed on its own; on exact (monotone) prefixes that changes
// nothing: the groups and H are the textbook ones, for the joint-style
// counts and for the grid estimate on centred probabilities.
func TestClassSmoothingNoiseFree(t *testing.T) {
	const n, nBins = 800, 64
	g, bins, labels, probs := data(n, nBins, 9)
	centers := BinCenters(g)
	for j, b := range bins {
		probs[j] = centers[b-1]
	}
	l2 := func(f []float64) ([]float64, error) { return smooth.PointwiseL2(f), nil }
	for _, c := range []*Config{
		{Bins: nBins, Reports: n, CountFromLabels: true, Smooth: l2},
		{Bins: nBins, Reports: n, CountFromLabels: true, Smooth: l2, Centers: centers},
	} {
		res, err := Private(newExactSource(bins, labels, probs, nBins), *c)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := Exact(bins, labels, probs, res.Boundaries)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Statistic(exact)
		if math.Abs(res.H-want) > 1e-9*want {
			t.Errorf("grid %v: H = %v, textbook %v", c.Centers != nil, res.H, want)
		}
	}
}
